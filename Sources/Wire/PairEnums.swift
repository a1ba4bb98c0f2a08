/// What a coordinator of a pair was started as (`--ha`), on the pair's link (``WirePairAnnouncement``).
public enum WirePairRole: UInt32, Sendable, Equatable, CaseIterable {
    /// Not said: an announcement without it is refused.
    case unspecified = 0
    /// `--ha primary`.
    case primary = 1
    /// `--ha backup`.
    case backup = 2
}

/// Where a coordinator of a pair stands (Binary Star's states), on the pair's link (``WirePairAnnouncement``).
public enum WirePairState: UInt32, Sendable, Equatable, CaseIterable {
    /// Not said: an announcement without it is refused.
    case unspecified = 0
    /// Started as the primary, not settled yet.
    case startingPrimary = 1
    /// Started as the backup, not settled yet.
    case startingBackup = 2
    /// Serves clients and workers, and streams its journal.
    case active = 3
    /// Applies the active one's stream; refuses clients and workers.
    case passive = 4
}
