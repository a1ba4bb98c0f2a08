import Foundation
import Runtime
import Synchronization
import Wire

/// What a client sends when the coordinator asks for its files (`UploadRequest`): only the files this
/// client submitted itself (a coordinator cannot make it send any other file of this machine), one at a
/// time. Requests are queued (`enqueue`) and answered in order by one task of the client's connection
/// (`serve`), which reads each file on a thread of ``ComputeThreads`` (blocking I/O kept off the cooperative
/// pool) and reads the next one only after the previous one was handed to the socket: the client holds no
/// more than what the coordinator granted (docs/protocol.md, "Uploads").
final class ClientUploads: Sendable {
    /// Paths this client announced as uploads.
    private let allowed = Mutex<Set<String>>([])
    /// The files asked for and not answered yet, in the order asked, with their batch; `serve` takes them.
    private let requests: AsyncStream<(batchID: String, wanted: [UploadWanted])>
    private let requested: AsyncStream<(batchID: String, wanted: [UploadWanted])>.Continuation
    /// Where the files are read.
    private let threads: ComputeThreads

    /// Uploads read on `threads` (the process's shared pool unless told otherwise).
    init(threads: ComputeThreads = .shared) {
        self.threads = threads
        (requests, requested) = AsyncStream.makeStream()
    }
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

    /// Queues the answer to `request`: the files among its items that this client submitted, answered in
    /// order by `serve`. A file this client did not submit is not sent (its item waits for one that did).
    func enqueue(_ request: UploadRequest) {
        if !request.spooled || request.awaitingItems == 0 { settle(request.batchID, spooled: request.spooled) }
        let wanted = request.items.filter { item in allowed.withLock { $0.contains(item.path) } }
        guard !wanted.isEmpty else { return }
        requested.yield((request.batchID, wanted))
    }

    /// Answers the queued requests' files one at a time, each read on a thread of its own and handed to
    /// `send` before the next is read, until `finish()`. Runs in the client's connection task group.
    func serve(send: (UploadData) async -> Void) async {
        for await (batchID, wanted) in requests {
            for item in wanted {
                let reason = unreadable.withLock { $0[item.path] }
                let data: UploadData
                if let reason {
                    data = UploadData(batchID: batchID, itemIndex: item.itemIndex, failure: reason)
                } else {
                    do {
                        data = try await threads.run { _ in LocalUpload.answer(item, batchID: batchID) }
                    } catch {
                        return  // the client is closing (cancelled) or the process's threads stopped
                    }
                }
                await send(data)
            }
        }
    }

    /// No more requests are answered: `serve` returns once the one it is reading is sent.
    func finish() {
        requested.finish()
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
