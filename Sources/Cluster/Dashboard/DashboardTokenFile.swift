import Foundation
import Runtime

/// The dashboard's token, from the file of `--dashboard-token-file`: read at start (where a missing,
/// short or malformed token stops the coordinator with a message that says how to make one) and again
/// whenever the file changes, so that replacing the file signs everyone out at once.
///
/// Read on the HTTP server's own thread (a `stat` per request, a read when it changed), never on the
/// cooperative pool.
public final class DashboardTokenFile: Sendable {
    /// Why a token file cannot be used.
    public struct Problem: Error, CustomStringConvertible {
        public let description: String
    }

    /// The fewest characters a token may have.
    public static let minimumLength = 16
    public let path: String
    private let cache: LockedValue<(modified: Date?, token: String?)>

    /// Reads `path`; throws `Problem` when it cannot be read or holds no usable token.
    public init(path: String) throws {
        self.path = path
        let token = try Self.read(path)
        cache = LockedValue((Self.modificationDate(path), token))
    }

    /// The token as the file holds it now; `nil` while it cannot be read or is not a usable token.
    public func current() -> String? {
        let modified = Self.modificationDate(path)
        return cache.withLock { cache in
            if modified != cache.modified {
                cache = (modified, try? Self.read(path))
            }
            return cache.token
        }
    }

    /// The token in `path`: its content without surrounding white space.
    static func read(_ path: String) throws -> String {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw Problem(
                description: "cannot read the dashboard token file \(path): \(error.localizedDescription). "
                    + "Create one with `openssl rand -hex 32 > \(path)` and give it with --dashboard-token-file")
        }
        let token = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        try validate(token, path: path)
        return token
    }

    /// Checks that `token` is long enough and made of characters a cookie and a URL carry unchanged.
    static func validate(_ token: String, path: String) throws {
        guard token.count >= minimumLength else {
            throw Problem(
                description:
                    "the dashboard token in \(path) has \(token.count) characters; it needs \(minimumLength) or more. "
                    + "Make one with `openssl rand -hex 32 > \(path)`")
        }
        let allowed = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.~".unicodeScalars)
        guard token.unicodeScalars.allSatisfy(allowed.contains) else {
            throw Problem(
                description: "the dashboard token in \(path) may hold only letters, digits and - _ . ~ "
                    + "(it travels in a URL and a cookie). Make one with `openssl rand -hex 32 > \(path)`")
        }
    }

    private static func modificationDate(_ path: String) -> Date? {
        (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date
    }
}
