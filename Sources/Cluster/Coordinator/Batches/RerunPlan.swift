import Wire

/// What the coordinator keeps of a batch's submission to run some of its items again (`RetryBatch`)
/// after the batch finished and its operations were let go: the submission without its items (their
/// sources and names are the registry's), so small, and free of references to the coordinator.
struct RerunPlan {
    /// `SubmitBatch` as accepted, its `items` left out: parameters, kind, sink, retries, deadline, priority.
    let submit: SubmitBatch
    /// The items that are a client's local files (`BatchItem.upload`), by index: a re-run asks for them again.
    let uploads: [Int: UploadMetadata]

    init(_ submit: SubmitBatch) {
        var kept = submit
        kept.items = []
        self.submit = kept
        uploads = BatchRun.uploads(of: submit)
    }
}
