import Logging

/// Keeps a flood of one kind of event from flooding the log: in each window, the first `burst`
/// occurrences of an event are logged, the rest are counted, and the count is logged once ("suppressed
/// 99,990 more …") when the window ends.
///
/// A value type, driven by the caller's clock like `Dispatcher`: `admit` answers whether to log one
/// occurrence now, and `expired` hands back the counts of windows that ended, for the caller's periodic
/// timer (heartbeats, liveness checks) to log.
struct LogThrottle {
    /// What suppressed events of one kind add up to, when their window ended.
    struct Suppressed: Equatable {
        let event: String
        let count: Int
    }

    private struct Window {
        var started: ContinuousClock.Instant
        var logged = 0
        var suppressed = 0
    }

    /// Occurrences logged per window and event.
    let burst: Int
    /// How long a window lasts.
    let window: Duration
    private var windows: [String: Window] = [:]

    init(burst: Int = 10, window: Duration = .seconds(10)) {
        self.burst = max(1, burst)
        self.window = window
    }

    /// Whether to log this occurrence of `event` (a short stable name, e.g. the log message).
    mutating func admit(_ event: String, now: ContinuousClock.Instant) -> Bool {
        var current = windows[event] ?? Window(started: now)
        if now - current.started >= window, current.suppressed == 0 {
            current = Window(started: now)
        }
        defer { windows[event] = current }
        guard current.logged < burst else {
            current.suppressed += 1
            return false
        }
        current.logged += 1
        return true
    }

    /// The events whose window has ended with occurrences suppressed; their windows start again.
    mutating func expired(now: ContinuousClock.Instant) -> [Suppressed] {
        var ended: [Suppressed] = []
        for (event, current) in windows where now - current.started >= window {
            if current.suppressed > 0 { ended.append(Suppressed(event: event, count: current.suppressed)) }
            windows[event] = nil
        }
        return ended.sorted { $0.event < $1.event }
    }
}

extension Logger {
    /// Logs the counts of suppressed events whose window ended (see `LogThrottle`).
    func logSuppressed(_ suppressed: [LogThrottle.Suppressed], window: Duration) {
        for entry in suppressed {
            warning("suppressed \(entry.count) more '\(entry.event)' lines in the last \(window)")
        }
    }
}
