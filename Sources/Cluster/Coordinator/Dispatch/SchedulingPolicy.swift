/// How the coordinator orders the tasks that wait for a worker slot (`--scheduling`).
public enum SchedulingPolicy: String, Sendable, CaseIterable {
    /// Fair share (the default): clients, and the batches of one client, take turns, each with the weight
    /// of its batch's priority (`FairShareQueue`). A small batch submitted behind a large one starts at once.
    case fairShare = "fair"
    /// One line for every batch, in the order tasks became ready: a batch waits for every batch before
    /// it. Kept for comparison (the scheduling benchmark) and for who wants it.
    case fifo
}
