/// Counts events in one-second buckets over a sliding window, for "tasks per second" in status.
struct ThroughputMeter {
    private let window = 10
    private var buckets: [(second: Int64, count: Int)] = []
    private let origin = ContinuousClock.now

    /// Records one event at `now`.
    mutating func record(at now: ContinuousClock.Instant) {
        let second = self.second(of: now)
        if let last = buckets.last, last.second == second {
            buckets[buckets.count - 1].count += 1
        } else {
            buckets.append((second, 1))
            if buckets.count > window + 1 { buckets.removeFirst(buckets.count - window - 1) }
        }
    }

    /// Events per second over the last `window` whole seconds before `now`.
    func rate(at now: ContinuousClock.Instant) -> Double {
        let current = second(of: now)
        let total = buckets.filter { $0.second >= current - Int64(window) && $0.second < current }.reduce(0) {
            $0 + $1.count
        }
        return Double(total) / Double(window)
    }

    private func second(of instant: ContinuousClock.Instant) -> Int64 {
        (instant - origin).components.seconds
    }
}
