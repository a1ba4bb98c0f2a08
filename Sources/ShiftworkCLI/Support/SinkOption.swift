import Fetching
import Foundation

/// Checks `--sink` (and `s3://` inputs) before a batch is submitted, so that a sink the workers cannot use
/// is refused with what to do instead of failing every item.
enum SinkOption {
    /// The sink to send: a directory as an absolute path (the workers resolve nothing relative to the
    /// client's directory), or `s3://BUCKET/PREFIX`.
    ///
    /// - Throws: `CommandError` for an empty sink, an `s3://` URL that is not one, or one without credentials.
    static func validate(
        _ sink: String, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> String {
        let trimmed = sink.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty else {
            throw CommandError("--sink is empty: give a directory every worker reaches, or s3://BUCKET/PREFIX")
        }
        if S3Location.isS3(trimmed) {
            do {
                _ = try S3Location(trimmed)
            } catch {
                throw CommandError("--sink \(error.description)")
            }
            try requireCredentials(for: "--sink \(trimmed)", environment: environment)
            return trimmed
        }
        if trimmed.contains("://"), !trimmed.hasPrefix("file://") {
            throw CommandError(
                "--sink \(trimmed): give a directory (a path every worker reaches) or s3://BUCKET/PREFIX")
        }
        if trimmed.hasPrefix("file://") { return trimmed }
        return URL(fileURLWithPath: trimmed).standardizedFileURL.path
    }

    /// Refuses `s3://` use when this machine has no S3 credentials to show for it: the workers sign with
    /// their own, which are set the same way.
    static func requireCredentials(
        for what: String, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws {
        guard S3Credentials.load(environment: environment) == nil else { return }
        throw CommandError("\(what): no S3 credentials found: \(S3Credentials.howToSet). The workers need them too.")
    }
}
