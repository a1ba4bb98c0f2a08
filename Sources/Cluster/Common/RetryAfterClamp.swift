/// The bounds of an origin's `Retry-After` as the cluster honours it: a wait in the past is no wait, and
/// one absurdly far away (a misconfigured server, a date years ahead) is cut to ``longest``, so that an
/// item is never held for hours by one header. The worker clamps what it reports, and the coordinator
/// clamps again what it receives (a worker is a peer like any other).
enum RetryAfterClamp {
    /// The longest `Retry-After` honoured: 5 minutes.
    static let longest: Duration = .seconds(300)

    /// `wait` in whole milliseconds, within 0...`longest`.
    static func milliseconds(_ wait: Duration) -> UInt32 {
        let clamped = min(max(wait, .zero), longest)
        let parts = clamped.components
        return UInt32(clamping: parts.seconds * 1000 + parts.attoseconds / 1_000_000_000_000_000)
    }

    /// A received `retry_after_ms` as a wait within 0...`longest`; `nil` for 0 (none asked for).
    static func duration(milliseconds: UInt32) -> Duration? {
        guard milliseconds > 0 else { return nil }
        return min(.milliseconds(Int64(milliseconds)), longest)
    }
}
