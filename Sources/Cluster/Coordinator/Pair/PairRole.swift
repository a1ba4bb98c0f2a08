/// What an operator started a coordinator of a pair as (`--ha primary|backup`): which of the two leads
/// when both start together with the same data. It is not what the coordinator is now (`PairState`).
public enum PairRole: String, Sendable, CaseIterable {
    /// Leads when both start together and neither holds newer data.
    case primary
    /// Follows when both start together; takes over when the active one is gone and a peer turns to it.
    case backup
}
