import CZeroMQ
import Foundation
import Glibc

/// A CurveZMQ key pair: a secret key that never leaves its owner, and the public key derived from it.
///
/// `shiftwork keygen NAME` writes the pair as two text files: `NAME.key` (the secret, mode 0600) and
/// `NAME.pub` (the public key, to put on the coordinator's allow-list, or to give to the workers and
/// clients when it is the coordinator's).
public struct CurveKeyPair: Sendable, Equatable {
    /// The public key, derived from the secret one.
    public let publicKey: CurvePublicKey
    /// The secret key in Z85 (40 characters). Never log it.
    public let secretKey: String

    /// Generates a new random key pair.
    ///
    /// - Throws: `CurveKeyError` when this libzmq has no CurveZMQ support.
    public static func generate() throws -> CurveKeyPair {
        guard Z85Key.isSupported else { throw CurveKeyError.unsupported }
        var publicText = [CChar](repeating: 0, count: Z85Key.length + 1)
        var secretText = [CChar](repeating: 0, count: Z85Key.length + 1)
        guard zmq_curve_keypair(&publicText, &secretText) == 0 else {
            throw CurveKeyError("zmq_curve_keypair failed: \(ZeroMQError.last("zmq_curve_keypair"))")
        }
        let secret = String(decoding: secretText.prefix(Z85Key.length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return try CurveKeyPair(secretKey: secret)
    }

    /// The pair whose secret key is `secretKey` (Z85); the public key is derived from it.
    ///
    /// - Throws: `CurveKeyError` when `secretKey` is not 40 characters of Z85 or CurveZMQ is unsupported.
    public init(secretKey: String) throws {
        guard Z85Key.isSupported else { throw CurveKeyError.unsupported }
        guard Z85Key.isValid(secretKey) else {
            throw CurveKeyError(
                "not a CurveZMQ secret key: expected 40 characters of Z85 (got \(secretKey.count) characters)")
        }
        var publicText = [CChar](repeating: 0, count: Z85Key.length + 1)
        let status = secretKey.withCString { zmq_curve_public(&publicText, $0) }
        guard status == 0 else {
            throw CurveKeyError(
                "cannot derive the public key from the secret key: \(ZeroMQError.last("zmq_curve_public"))")
        }
        self.secretKey = secretKey
        self.publicKey = CurvePublicKey(
            validated: String(
                decoding: publicText.prefix(Z85Key.length).map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }

    /// Reads a secret key file (as `shiftwork keygen` writes `NAME.key`): the secret key in Z85 on a
    /// line of its own; blank lines and `# …` comments are ignored.
    ///
    /// - Throws: `CurveKeyError` naming the file when it cannot be read or does not hold exactly one
    ///   secret key. The error never quotes the file's content.
    public static func load(secretKeyFile path: String) throws -> CurveKeyPair {
        let lines = try KeyFile.contentLines(of: path, what: "secret key")
        guard lines.count == 1, let line = lines.first else {
            throw CurveKeyError(
                "\(path) holds \(lines.count) non-comment lines: a secret key file holds exactly one, the secret key (40 characters of Z85), as `shiftwork keygen NAME` writes into NAME.key"
            )
        }
        let token = String(line.text.prefix(while: { !$0.isWhitespace }))
        guard Z85Key.isValid(token) else {
            throw CurveKeyError(
                "\(path) line \(line.number): expected a CurveZMQ secret key (40 characters of Z85, as `shiftwork keygen NAME` writes into NAME.key), found \(token.count) characters\(token.count == Z85Key.length ? " outside the Z85 alphabet" : ""). Is this the right file?"
            )
        }
        do {
            return try CurveKeyPair(secretKey: token)
        } catch let error as CurveKeyError {
            throw CurveKeyError("\(path): \(error.description)")
        }
    }

    /// Writes `NAME.key` (the secret key, mode 0600) and `NAME.pub` (the public key) into `directory`.
    /// Returns their paths.
    ///
    /// - Throws: `CurveKeyError` when a file exists and `overwrite` is false, or cannot be written.
    @discardableResult
    public func write(
        name: String, into directory: String, overwrite: Bool = false
    ) throws -> (secretKey: String, publicKey: String) {
        let secretPath = (directory as NSString).appendingPathComponent("\(name).key")
        let publicPath = (directory as NSString).appendingPathComponent("\(name).pub")
        if !overwrite {
            for path in [secretPath, publicPath] where FileManager.default.fileExists(atPath: path) {
                throw CurveKeyError(
                    "\(path) already exists: keep it, choose another name, or replace the pair with --force (peers that know the old public key will be refused)"
                )
            }
        }
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw CurveKeyError("cannot create the directory \(directory): \(error.localizedDescription)")
        }
        try Self.writeFile(
            secretPath, mode: 0o600,
            text: """
                # Shiftwork CurveZMQ secret key of '\(name)'. Keep it private: whoever holds it can act as '\(name)'.
                # Its public key, \(publicKey.z85), is in \(name).pub.
                \(secretKey)

                """)
        try Self.writeFile(
            publicPath, mode: 0o644,
            text: """
                # Shiftwork CurveZMQ public key of '\(name)': put it on the coordinator's allow-list (--allow-keys),
                # or, for the coordinator's own key, give it to workers and clients (--coordinator-key).
                \(publicKey.z85)

                """)
        return (secretPath, publicPath)
    }

    /// Writes `text` to `path` with `mode`, replacing any file there; the mode is set before any byte is
    /// written, so a secret is never readable by others, even briefly.
    private static func writeFile(_ path: String, mode: mode_t, text: String) throws {
        unlink(path)
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard descriptor >= 0 else {
            throw CurveKeyError("cannot write \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        fchmod(descriptor, mode)  // the umask may have removed bits of `mode`; it never adds any
        let bytes = Array(text.utf8)
        var written = 0
        while written < bytes.count {
            let count = bytes[written...].withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw CurveKeyError("cannot write \(path): \(String(cString: strerror(errno)))")
            }
            written += count
        }
    }
}
