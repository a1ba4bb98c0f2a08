import ArgumentParser
import Fetching

/// `--min-download-rate`, `--min-download-rate-window` and `--download-time-limit`: how long a download
/// may crawl or take (a worker, `run`). Each falls back to a `SHIFTWORK_*` variable.
struct DownloadOptions: ParsableArguments {
    private static let defaults = FetchConfiguration()

    @Option(
        help:
            "Slowest accepted download, in KiB/s averaged over --min-download-rate-window: a slower attempt fails and is retried; 0 turns the check off (env SHIFTWORK_MIN_DOWNLOAD_RATE; default \(defaults.minimumRate / 1024))."
    )
    var minDownloadRate: Double?

    @Option(
        help:
            "Seconds over which the download rate is measured (env SHIFTWORK_MIN_DOWNLOAD_RATE_WINDOW; default \(defaults.minimumRateWindow.components.seconds))."
    )
    var minDownloadRateWindow: Int?

    @Option(
        help:
            "Seconds one download attempt may take in all (env SHIFTWORK_DOWNLOAD_TIME_LIMIT; default \(defaults.totalTimeLimit.components.seconds)); the coordinator retries a failed attempt (submit --retries)."
    )
    var downloadTimeLimit: Int?

    /// The fetch configuration with these settings, validated.
    func configuration(allowLocalFiles: Bool, maxBytes: Int) throws -> FetchConfiguration {
        let defaults = Self.defaults
        let rate = try Environment.resolve(
            minDownloadRate, "MIN_DOWNLOAD_RATE", default: Double(defaults.minimumRate) / 1024)
        let window = try Environment.resolve(
            minDownloadRateWindow, "MIN_DOWNLOAD_RATE_WINDOW",
            default: Int(defaults.minimumRateWindow.components.seconds))
        let limit = try Environment.resolve(
            downloadTimeLimit, "DOWNLOAD_TIME_LIMIT", default: Int(defaults.totalTimeLimit.components.seconds))
        guard rate >= 0, rate < 1e9 else {
            throw ValidationError(
                "--min-download-rate (or SHIFTWORK_MIN_DOWNLOAD_RATE) must be 0 (no minimum) or a positive number of KiB/s (got \(rate))"
            )
        }
        guard window >= 1 else {
            throw ValidationError(
                "--min-download-rate-window (or SHIFTWORK_MIN_DOWNLOAD_RATE_WINDOW) must be at least 1 second (got \(window))"
            )
        }
        guard limit >= 1 else {
            throw ValidationError(
                "--download-time-limit (or SHIFTWORK_DOWNLOAD_TIME_LIMIT) must be at least 1 second (got \(limit))")
        }
        var configuration = FetchConfiguration(allowLocalFiles: allowLocalFiles, maxBytes: maxBytes)
        configuration.minimumRate = Int((rate * 1024).rounded())
        configuration.minimumRateWindow = .seconds(window)
        configuration.totalTimeLimit = .seconds(limit)
        // For s3:// sources and sinks; read once, here at start-up.
        configuration.s3Credentials = S3Credentials.load()
        // One attempt per task: the coordinator retries transient failures (`submit --retries`), on another
        // worker where one is free, and shows each attempt in status; retrying here too would multiply them.
        configuration.retries = 0
        return configuration
    }
}
