import CCurl
import Foundation
import Runtime

/// The thread that drives every HTTP transfer of an ``ImageFetcher``: one libcurl multi handle, polled
/// by one thread of its own, so that no transfer ever blocks Swift's cooperative pool.
///
/// ``perform(_:)`` puts a transfer in the loop's locked inbox and wakes the thread
/// (`curl_multi_wakeup`); the thread adds it to the multi handle, runs every transfer's I/O in
/// `curl_multi_perform`, waits in `curl_multi_poll` (for socket activity, libcurl's own timers, a
/// wake-up, or the nearest read timeout) and resumes the waiting task's continuation when its transfer
/// ends. Cancelling the waiting task removes its transfer at the next wake-up. Connections (and HTTP/2
/// sessions) are reused across transfers.
///
/// Every `curl_multi_wakeup` happens under the inbox's lock, before the thread marks the loop stopped
/// (under the same lock) and frees the multi handle: a late caller never wakes a freed handle.
final class TransferLoop: @unchecked Sendable {
    /// What other threads hand to the loop thread.
    private struct Inbox {
        var nextID: UInt64 = 0
        var starts: [CurlTransfer] = []
        var cancels: [UInt64] = []
        var stopping = false
        var stopped = false
        var stopWaiters: [CheckedContinuation<Void, Never>] = []
    }

    private let multi: UnsafeMutableRawPointer
    private let inbox = InlineLock(Inbox())
    /// The transfers in the multi handle, by id and by easy handle. Loop thread only.
    private var running: [UInt64: CurlTransfer] = [:]
    private var byHandle: [UnsafeMutableRawPointer: CurlTransfer] = [:]
    /// Delivered bodies' memory, for the next bodies (``BodyPool``). Loop thread only.
    let bodies = BodyPool()
    /// When a transfer last ran: the pool is let go after ``bodiesIdleRelease`` without one. Loop thread only.
    private var lastBusy = ContinuousClock.now

    /// How long the loop keeps warm bodies without a transfer running.
    static let bodiesIdleRelease: Duration = .seconds(5)

    /// libcurl's global state, set up once per process before the first handle.
    private static let globalSetUp: Bool = shiftwork_curl_global_init() == CURLE_OK

    /// Starts the loop's thread. Returns `nil` when libcurl cannot be initialised.
    init?(name: String = "shiftwork-http") {
        guard Self.globalSetUp, let multi = shiftwork_curl_multi_init() else { return nil }
        self.multi = multi
        // A `PoolThread`, not Foundation's `Thread`, which on Linux does not apply a name set before `start()`:
        // the loop would carry the name of the thread that created it (a pool thread's) in `top -H` and perf.
        PoolThread.start(name: name) { [self] in run() }
    }

    /// Runs `request` to its end and reports how it ended. Cancelling the calling task stops the transfer
    /// promptly (the report's `stop` is then `.cancelled`).
    func perform(_ request: TransferRequest) async -> TransferReport {
        let id = inbox.withLock { inbox -> UInt64 in
            inbox.nextID += 1
            return inbox.nextID
        }
        let handOff = TransferHandOff()
        // What the loop's thread wrote into the report (its body) happens before what this task reads of it.
        defer { ThreadSanitizerAnnotations.tookOver(handOff) }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<TransferReport, Never>) in
                let transfer = CurlTransfer(
                    id: id, request: request, continuation: continuation, bodies: bodies, handOff: handOff)
                // Under the lock, so that a cancellation either finds the transfer queued or is seen here.
                let refusal = inbox.withLock { inbox -> TransferStop? in
                    if inbox.stopping { return .shutDown }
                    if Task.isCancelled { return .cancelled }
                    inbox.starts.append(transfer)
                    shiftwork_curl_multi_wakeup(multi)
                    return nil
                }
                if let refusal { transfer.finish(curlCode: CURLE_OK, stop: refusal) }
            }
        } onCancel: {
            inbox.withLock { inbox in
                guard !inbox.stopped else { return }
                inbox.cancels.append(id)
                shiftwork_curl_multi_wakeup(multi)
            }
        }
    }

    /// Ends every transfer (reported as `.shutDown`) and the thread, and waits until the thread is done.
    func shutdown() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = inbox.withLock { inbox -> Bool in
                if inbox.stopped { return true }
                inbox.stopping = true
                inbox.stopWaiters.append(continuation)
                shiftwork_curl_multi_wakeup(multi)
                return false
            }
            if done { continuation.resume() }
        }
    }

    /// Asks the thread to end without waiting for it (for a fetcher that is released unshut).
    func requestShutdown() {
        inbox.withLock { inbox in
            guard !inbox.stopped else { return }
            inbox.stopping = true
            shiftwork_curl_multi_wakeup(multi)
        }
    }

    // MARK: - The loop thread

    private func run() {
        while true {
            let (starts, cancels, stopping) = inbox.withLock { inbox in
                defer {
                    inbox.starts = []
                    inbox.cancels = []
                }
                return (inbox.starts, inbox.cancels, inbox.stopping)
            }
            for transfer in starts { add(transfer) }
            for id in cancels {
                if let transfer = running[id] { remove(transfer, curlCode: CURLE_OK, stop: .cancelled) }
            }
            if stopping { break }
            var stillRunning: Int32 = 0
            shiftwork_curl_multi_perform(multi, &stillRunning)
            collectFinished()
            let now = ContinuousClock.now
            if !running.isEmpty {
                lastBusy = now
            } else if bodies.count > 0, now - lastBusy >= Self.bodiesIdleRelease {
                bodies.releaseAll()
            }
            var nearest = now + .seconds(1)
            for transfer in Array(running.values) {
                let deadline = transfer.silenceDeadline
                if deadline <= now {
                    remove(transfer, curlCode: CURLE_OK, stop: .silent)
                } else if deadline < nearest {
                    nearest = deadline
                }
            }
            let wait = (nearest - now).components
            let milliseconds = Int32(clamping: wait.seconds * 1000 + wait.attoseconds / 1_000_000_000_000_000 + 1)
            shiftwork_curl_multi_poll(multi, nil, 0, milliseconds, nil)
        }
        for transfer in Array(running.values) { remove(transfer, curlCode: CURLE_OK, stop: .shutDown) }
        // Transfers queued after the last look at the inbox.
        let (late, waiters) = inbox.withLock { inbox in
            defer {
                inbox.starts = []
                inbox.stopped = true
                inbox.stopWaiters = []
            }
            return (inbox.starts, inbox.stopWaiters)
        }
        for transfer in late { transfer.finish(curlCode: CURLE_OK, stop: .shutDown) }
        shiftwork_curl_multi_cleanup(multi)
        for waiter in waiters { waiter.resume() }
    }

    private func add(_ transfer: CurlTransfer) {
        do {
            try transfer.setUp()
        } catch {
            return transfer.finish(curlCode: CURLE_OK, stop: .setupFailed(error.message))
        }
        guard let handle = transfer.handle else { return }
        let code = shiftwork_curl_multi_add_handle(multi, handle)
        guard code == CURLM_OK else {
            return transfer.finish(
                curlCode: CURLE_OK, stop: .setupFailed(String(cString: shiftwork_curl_multi_strerror(code))))
        }
        running[transfer.id] = transfer
        byHandle[handle] = transfer
    }

    /// Reports every transfer libcurl has finished.
    private func collectFinished() {
        var done: [(CurlTransfer, CURLcode)] = []
        var queued: Int32 = 0
        while let message = shiftwork_curl_multi_info_read(multi, &queued) {
            guard message.pointee.msg == CURLMSG_DONE, let handle = message.pointee.easy_handle,
                let transfer = byHandle[handle]
            else { continue }
            done.append((transfer, shiftwork_curl_message_result(message)))
        }
        for (transfer, code) in done { remove(transfer, curlCode: code, stop: nil) }
    }

    private func remove(_ transfer: CurlTransfer, curlCode: CURLcode, stop: TransferStop?) {
        if let handle = transfer.handle {
            shiftwork_curl_multi_remove_handle(multi, handle)
            byHandle[handle] = nil
        }
        running[transfer.id] = nil
        transfer.finish(curlCode: curlCode, stop: stop)
    }
}
