import ArgumentParser
import Cluster
import Wire

/// How a submitted batch shares the cluster (`--priority`) and how a submission sent again finds it
/// (`--key`): options of `submit`.
struct SharingOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "The batch's share of the cluster against other waiting batches: -10...10 (higher runs sooner; each 2 points double its share), or low, normal, high (-5, 0, 5). Lower priorities still progress (env SHIFTWORK_PRIORITY; default normal).",
            valueName: "priority"))
    var priority: String?

    @Option(
        help: ArgumentHelp(
            "An idempotency key of your choice (1-128 of A-Z a-z 0-9 . _ - : @): submitting again with the same key attaches to the batch it made, while the coordinator keeps that batch, instead of running it twice (env SHIFTWORK_KEY).",
            valueName: "key"))
    var key: String?

    /// `submission` with the priority and key these options give, validated.
    ///
    /// - Throws: `CommandError` saying the valid range or characters when one is wrong.
    func applied(to submission: BatchSubmission) throws -> BatchSubmission {
        var submission = submission
        if let text = Environment.resolve(priority, "PRIORITY") {
            do {
                submission.priority = try BatchPriority.parse(text)
            } catch {
                throw CommandError("--priority: \(error.description)")
            }
        }
        if let key = Environment.resolve(key, "KEY") {
            if let problem = IdempotencyKey.problem(key) { throw CommandError("--key: \(problem)") }
            submission.idempotencyKey = key
        }
        return submission
    }
}
