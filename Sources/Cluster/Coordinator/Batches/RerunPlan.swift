/// What the coordinator keeps of a batch's submission to run some of its items again (`RetryBatch`)
/// after the batch finished and its operations were let go: how its items' operations are made, and its
/// deadline. Small: no items, no payloads.
struct RerunPlan {
    let planner: ItemPlanner
    /// `SubmitBatch.deadlineSeconds`: a retry's items are cancelled this long after the retry (0: never).
    let deadlineSeconds: UInt32
}
