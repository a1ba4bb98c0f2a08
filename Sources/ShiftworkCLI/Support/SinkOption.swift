import Foundation

/// Checks `--sink` before a batch is submitted, so that a sink the workers cannot use is refused with
/// what to do instead of failing every item.
enum SinkOption {
    /// The sink to send: a directory as an absolute path (the workers resolve nothing relative to the
    /// client's directory).
    ///
    /// - Throws: `CommandError` for an empty sink, and for `s3://`, which this build's workers cannot
    ///   write (say what to use instead).
    static func validate(_ sink: String) throws -> String {
        let trimmed = sink.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty else { throw CommandError("--sink is empty: give a directory every worker reaches") }
        if trimmed.lowercased().hasPrefix("s3://") {
            throw CommandError(
                "--sink \(trimmed): S3 sinks are not built yet; give a directory every worker reaches (a shared volume), "
                + "or leave --sink out to receive the outputs in --out")
        }
        if trimmed.contains("://"), !trimmed.hasPrefix("file://") {
            throw CommandError("--sink \(trimmed): give a directory (a path every worker reaches)")
        }
        if trimmed.hasPrefix("file://") { return trimmed }
        return URL(fileURLWithPath: trimmed).standardizedFileURL.path
    }
}
