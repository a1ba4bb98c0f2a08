import Dispatch
import Foundation
import Synchronization
import Wire

/// What a client sends when the coordinator asks for its files (`UploadRequest`): only the files this
/// client submitted itself (a coordinator cannot make it send any other file of this machine), one at a
/// time, read on a serial queue of its own (blocking I/O kept off the cooperative pool). Each file is
/// read only when asked, and the next one only after the previous one was handed to the socket: the
/// client holds no more than what the coordinator granted (docs/protocol.md, "Uploads").
final class ClientUploads: Sendable {
    /// Paths this client announced as uploads.
    private let allowed = Mutex<Set<String>>([])
    private let queue = DispatchQueue(label: "shiftwork.client.uploads")
    /// `submit --detach`: who waits for a batch's uploads to be in the coordinator's keeping, and what
    /// the coordinator said of the batches no one waits for yet (`true`: all spooled; `false`: no spool).
    private let settled = Mutex<(waiters: [String: CheckedContinuation<Bool, Never>], known: [String: Bool])>(
        ([:], [:]))

    /// Files announced that cannot be read, with why: asked for one, the client answers with that failure.
    private let unreadable = Mutex<[String: String]>([:])

    /// The client submitted these paths as uploads: it answers for them.
    func allow(_ paths: some Sequence<String>) {
        allowed.withLock { $0.formUnion(paths) }
    }

    /// The client submitted these paths although they cannot be read (`LocalUpload.unreadable`): asked for
    /// one, it answers with the reason, and only that item fails.
    func allowUnreadable(_ reasons: [String: String]) {
        guard !reasons.isEmpty else { return }
        unreadable.withLock { $0.merge(reasons) { _, new in new } }
        allow(reasons.keys)
    }

    /// Answers `request`'s files in order, each with `send` (which returns once the message is handed
    /// to the socket). A file this client did not submit is not sent (its item waits for one that did).
    func answer(_ request: UploadRequest, send: @escaping @Sendable (UploadData) async -> Void) {
        if !request.spooled || request.awaitingItems == 0 { settle(request.batchID, spooled: request.spooled) }
        let wanted = request.items.filter { item in allowed.withLock { $0.contains(item.path) } }
        guard !wanted.isEmpty else { return }
        let batchID = request.batchID
        queue.async {
            for item in wanted {
                let reason = self.unreadable.withLock { $0[item.path] }
                let data =
                    reason.map { UploadData(batchID: batchID, itemIndex: item.itemIndex, failure: $0) }
                    ?? LocalUpload.answer(item, batchID: batchID)
                // Wait for the hand-off before reading the next file (a blocking wait on this queue's thread).
                let done = DispatchSemaphore(value: 0)
                Task {
                    await send(data)
                    done.signal()
                }
                done.wait()
            }
        }
    }

    /// Waits until the coordinator holds every upload of `batchID` on its disk (`true`), or says it keeps
    /// uploads in memory only (`false`: the client must stay to answer it after a restart).
    func waitUntilKept(_ batchID: String) async -> Bool {
        await withCheckedContinuation { continuation in
            let known: Bool? = settled.withLock { state in
                if let known = state.known.removeValue(forKey: batchID) { return known }
                state.waiters[batchID] = continuation
                return nil
            }
            if let known { continuation.resume(returning: known) }
        }
    }

    private func settle(_ batchID: String, spooled: Bool) {
        let waiter = settled.withLock { state in
            if let waiter = state.waiters.removeValue(forKey: batchID) { return Optional(waiter) }
            state.known[batchID] = spooled
            return nil
        }
        waiter?.resume(returning: spooled)
    }

    /// The absolute paths among a batch's sources (as `status` lists them): the local files it was submitted
    /// with, which `results` and `retry` on this machine may be asked for. Each is still sent only when it is
    /// what was announced (its size and modification time to the nanosecond).
    static func localSources(of batch: BatchStatus?) -> [String] {
        (batch?.items ?? []).map(\.source).filter { $0.hasPrefix("/") }
    }
}
