import Foundation
import Logging

/// Writes each event as one string (its level, message, then the metadata sorted by key), as a stream handler
/// would: what tests of log lines (`EscapingLogHandler`'s escaping and masking) read back.
final class RecordingLogHandler: LogHandler, @unchecked Sendable {
    // `lock` guards `lines`.
    private let lock = NSLock()
    private var lines: [String] = []
    var logLevel: Logger.Level = .trace
    var metadata: Logger.Metadata = [:]
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// The events logged so far, in order.
    var events: [String] { lock.withLock { lines } }

    func log(event: LogEvent) {
        let merged = metadata.merging(event.metadata ?? [:]) { $1 }
        let rendered = merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        lock.withLock { lines.append("\(event.level) \(event.message) \(rendered)") }
    }
}
