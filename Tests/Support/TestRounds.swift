import Foundation

/// How many times a test that repeats a scenario (stops, kills, races) plays it: few in `make test`, where
/// every round costs the newcomer's wait, and many in `make test-long` (scripts/test-long, which CI runs
/// after `make test`), which sets `SHIFTWORK_LONG_TESTS=1` to hunt for the rare interleaving. Every round
/// makes the same assertions either way; only their number changes.
public enum TestRounds {
    /// Whether this run is the long one (`SHIFTWORK_LONG_TESTS=1`).
    public static var isLong: Bool { ProcessInfo.processInfo.environment["SHIFTWORK_LONG_TESTS"] == "1" }

    /// `quick` in `make test`, `long` in `make test-long`.
    public static func count(quick: Int, long: Int) -> Int { isLong ? long : quick }
}
