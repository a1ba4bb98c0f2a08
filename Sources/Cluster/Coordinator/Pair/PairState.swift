/// Where a coordinator of a pair stands, after Binary Star's four states (the ZeroMQ guide, chapter 4):
/// the two starting states, before the peer has been heard or the coordinator has taken over, and the
/// two settled ones. Each coordinator announces its state to the other every heartbeat.
public enum PairState: String, Sendable, CaseIterable {
    /// Started as the primary, not yet settled.
    case startingPrimary = "starting-primary"
    /// Started as the backup, not yet settled.
    case startingBackup = "starting-backup"
    /// Serves clients and workers, and streams its journal to the other.
    case active
    /// Applies the active one's journal stream and refuses clients and workers, who turn to the active one.
    case passive
}
