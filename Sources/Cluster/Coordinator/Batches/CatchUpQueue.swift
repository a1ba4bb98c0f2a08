import Wire

/// The clients being sent the finished items of a batch they attached to (`FetchResults`), and how far each
/// has got: the coordinator sends them a few at a time, in turn, while the socket's queue is short, and comes
/// back to them on a one-shot timer of its thread when it is not (`Coordinator+Replay`).
struct CatchUpQueue {
    /// One client's catch-up: the registry's progress, and the finished items taken from it not sent yet.
    struct Run {
        var progress: BatchRegistry.CatchUp
        var pending: ArraySlice<ItemFinished> = []
    }

    /// The catch-ups in progress, served in turn.
    var runs: [Run] = []
    /// A turn is scheduled on the coordinator's thread (at most one at a time).
    var isScheduled = false

    /// No catch-up is in progress.
    var isEmpty: Bool { runs.isEmpty }
}
