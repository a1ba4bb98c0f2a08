import Foundation

/// A CurveZMQ public key, in its 40-character Z85 text form. Safe to share: it identifies a peer (a
/// worker, a client, the coordinator) and goes on allow-lists.
public struct CurvePublicKey: Sendable, Hashable, CustomStringConvertible {
    /// The key as 40 characters of Z85.
    public let z85: String

    /// Validates `z85` as a public key.
    ///
    /// - Throws: `CurveKeyError` when it is not 40 characters of ZeroMQ's Z85 alphabet.
    public init(z85: String) throws {
        guard Z85Key.isValid(z85) else {
            throw CurveKeyError(
                "'\(z85)' is not a CurveZMQ public key: expected 40 characters of Z85, as `shiftwork keygen` writes into NAME.pub"
            )
        }
        self.z85 = z85
    }

    /// Creates a key from text already known to be valid Z85.
    init(validated z85: String) { self.z85 = z85 }

    /// The key in Z85.
    public var description: String { z85 }

    /// Reads a public key file: one key (Z85) on a line of its own; blank lines and comment lines
    /// (`# …`) are ignored.
    ///
    /// - Throws: `CurveKeyError` naming the file when it cannot be read or does not hold exactly one key.
    public static func load(file path: String) throws -> CurvePublicKey {
        let keys = try KeyFile.keys(in: path, what: "public key")
        guard keys.count == 1, let key = keys.first else {
            throw CurveKeyError(
                "\(path) holds \(keys.count) keys: a public key file holds exactly one (a 40-character Z85 line, as `shiftwork keygen` writes into NAME.pub)"
            )
        }
        return key
    }

    /// Reads an allow-list: either a directory, whose `*.pub` files each hold one key, or one file with
    /// one key per line (blank lines and `# …` comments ignored).
    ///
    /// - Parameter allowingEmpty: an empty list is returned rather than refused (a role's list that may
    ///   have no key for now).
    /// - Throws: `CurveKeyError` naming the file when a file cannot be read or holds something that is
    ///   not a key, or when the list is empty (unless `allowingEmpty`).
    public static func loadAllowList(_ path: String, allowingEmpty: Bool = false) throws -> Set<CurvePublicKey> {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw CurveKeyError(
                "the allow-list \(path) does not exist: give a directory of *.pub files or a file with one public key per line"
            )
        }
        var keys: Set<CurvePublicKey> = []
        if isDirectory.boolValue {
            let names: [String]
            do {
                names = try FileManager.default.contentsOfDirectory(atPath: path)
            } catch {
                throw CurveKeyError("cannot list the allow-list directory \(path): \(error.localizedDescription)")
            }
            for name in names.sorted() where name.hasSuffix(".pub") {
                keys.insert(try load(file: (path as NSString).appendingPathComponent(name)))
            }
            if keys.isEmpty, !allowingEmpty {
                throw CurveKeyError(
                    "the allow-list directory \(path) has no *.pub file: add the public keys of the workers and clients (`shiftwork keygen NAME` writes NAME.pub)"
                )
            }
        } else {
            keys = Set(try KeyFile.keys(in: path, what: "allow-list"))
            if keys.isEmpty, !allowingEmpty {
                throw CurveKeyError(
                    "the allow-list \(path) holds no key: put one public key (40 characters of Z85) per line")
            }
        }
        return keys
    }
}
