import Cluster
import Wire

// What the tests of a coordinator's limits submit and read back (`LimitsTests` in-process,
// `ClientLimitsProcessTests` against a real coordinator process).

extension SubmitBatch {
    /// A batch of `count` no-op items (`noop-0`, `noop-1`, …).
    static func noop(items count: Int) -> SubmitBatch {
        SubmitBatch(requestID: "", items: (0..<count).map { BatchItem(source: "noop-\($0)") }, kind: .noop)
    }
}

extension ClusterClient {
    /// The first event of submitting `batch`: the batch's ID once accepted, or the refusal's text (`.closed` when
    /// the stream ends without either).
    nonisolated func firstEvent(of batch: SubmitBatch) async -> Result<String, ClusterClientError> {
        do {
            for try await event in await submit(batch) {
                if case .accepted(let batchID, _) = event { return .success(batchID) }
            }
            return .failure(.closed)
        } catch let error as ClusterClientError {
            return .failure(error)
        } catch {
            return .failure(.refused("\(error)"))
        }
    }
}
