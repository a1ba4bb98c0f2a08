/// Whether a worker gives tasks back that wait for its compute threads, when the coordinator asks
/// (work stealing at a batch's tail; `GiveBackTask`): `shiftwork worker --give-back`, `SHIFTWORK_GIVE_BACK`.
public enum GiveBack: String, Sendable, CaseIterable {
    /// Not announced: the coordinator never asks this worker for a task back (as with an older worker).
    case off
    /// Announced with the compute threads (the default): a tilt-shift still waiting for one of them is
    /// given back when asked, and runs on a worker with an idle compute thread instead.
    case on
}
