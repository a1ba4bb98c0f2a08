extension CoordinatorConfiguration {
    /// The task timeout when none is given: 15 minutes.
    ///
    /// It must fit the largest task a worker accepts, so that only a stuck task is cut. A download is
    /// bounded by the worker itself, at 10 minutes by default (`--download-time-limit`, with the minimum
    /// rate of 1 KiB/s and the 100 MiB byte limit): the timeout stays above that, so the worker's own,
    /// more precise error is the one reported. A tilt-shift of the largest image a worker accepts (150
    /// megapixels, PNG to PNG) takes about 3.5 s of one core (docs/benchmarks.md): even on a machine
    /// loaded 100 times over, that is far below 15 minutes.
    public static let defaultTaskTimeout: Duration = .seconds(900)

    /// The task timeouts a coordinator accepts: at least a second, at most a day.
    public static let allowedTaskTimeoutSeconds: ClosedRange<Int> = 1...86_400
}

extension CoordinatorConfiguration {
    /// This configuration with another ``taskTimeout``.
    public func withTaskTimeout(_ timeout: Duration) -> CoordinatorConfiguration {
        var copy = self
        copy.taskTimeout = timeout
        return copy
    }
}
