import ArgumentParser
import Cluster
import Logging

/// `--log-level`, shared by every command that logs.
struct LoggingOptions: ParsableArguments {
    @Option(
        help:
            "trace, debug, info, notice, warning, error or critical (env SHIFTWORK_LOG_LEVEL; default: warning for run/submit, info for services)."
    )
    var logLevel: String?

    /// A logger writing to standard error at the chosen level.
    func makeLogger(label: String, defaultLevel: Logger.Level) throws -> Logger {
        let text = Environment.resolve(logLevel, "LOG_LEVEL", default: defaultLevel.rawValue)
        guard let level = Logger.Level(rawValue: text.lowercased()) else {
            throw ValidationError(
                "unknown log level '\(text)': use trace, debug, info, notice, warning, error or critical")
        }
        // Every line is escaped where it is written: values from the network cannot forge lines or steer a terminal.
        var logger = Logger(label: label) { EscapingLogHandler(wrapping: StreamLogHandler.standardError(label: $0)) }
        logger.logLevel = level
        return logger
    }
}
