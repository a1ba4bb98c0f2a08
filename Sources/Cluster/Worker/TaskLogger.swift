import Logging
import Wire

/// Writes the worker's log lines about one task, each with the metadata that names it: `batch`,
/// `task`, `attempt` and `kind`, plus `source` for a download when the level is `debug` or lower.
///
/// The metadata is built only for a line that is actually written, so the per-task `debug` lines cost
/// next to nothing at `info`, which must stay quiet at thousands of tasks a second.
struct TaskLogger: Sendable {
    private let logger: Logger
    private let batchID: String
    private let taskID: String
    private let attempt: UInt32
    private let kind: TaskKind
    private let source: String

    /// A logger for the task of `assignment`, writing through `logger`.
    init(_ logger: Logger, assignment: TaskAssignment) {
        self.logger = logger
        batchID = assignment.batchID
        taskID = assignment.taskID
        attempt = assignment.attempt
        kind = assignment.kind
        source = assignment.source
    }

    /// Whether lines at `level` are written; check it before doing work only a log line needs.
    func isEnabled(_ level: Logger.Level) -> Bool { logger.logLevel <= level }

    /// The task's metadata, as attached to every line.
    var metadata: Logger.Metadata {
        var metadata: Logger.Metadata = [
            "batch": .string(batchID), "task": .string(taskID),
            "attempt": .stringConvertible(attempt), "kind": .string(kind.logName),
        ]
        if kind == .download, logger.logLevel <= .debug { metadata["source"] = .string(source) }
        return metadata
    }

    func debug(_ message: @autoclosure () -> Logger.Message, metadata extra: @autoclosure () -> Logger.Metadata = [:]) {
        log(.debug, message(), extra())
    }

    func info(_ message: @autoclosure () -> Logger.Message, metadata extra: @autoclosure () -> Logger.Metadata = [:]) {
        log(.info, message(), extra())
    }

    func error(_ message: @autoclosure () -> Logger.Message, metadata extra: @autoclosure () -> Logger.Metadata = [:]) {
        log(.error, message(), extra())
    }

    private func log(
        _ level: Logger.Level, _ message: @autoclosure () -> Logger.Message,
        _ extra: @autoclosure () -> Logger.Metadata
    ) {
        guard isEnabled(level) else { return }
        logger.log(level: level, message(), metadata: metadata.merging(extra()) { _, new in new })
    }
}

extension TaskKind {
    /// The kind as it appears in logs: `download`, `tilt-shift`, `noop` or `unspecified`.
    var logName: String {
        switch self {
        case .unspecified: "unspecified"
        case .download: "download"
        case .tiltShift: "tilt-shift"
        case .noop: "noop"
        }
    }
}

extension FailureCode {
    /// The code as it appears in logs, e.g. `download` or `limit`.
    var logName: String { name }
}
