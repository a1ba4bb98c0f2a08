import CZeroMQ
import Foundation
import Runtime
import Synchronization

/// The ZAP handler (ZeroMQ Authentication Protocol, RFC 27) of a `MessagingContext`: it decides which
/// CurveZMQ clients may connect to the CURVE servers of that context.
///
/// It binds a REP socket to `inproc://zeromq.zap.01` on a thread of its own (libzmq sockets belong to
/// one thread; Swift's cooperative pool never blocks on it) and answers each handshake's request with
/// 200 when the peer's public key is on the allow-list, 400 otherwise; the 200 carries the key (Z85) as
/// the ZAP user ID, which libzmq attaches to every message of that connection as its `User-Id` (read it
/// with `SocketChannel.open(appendsPeerKey:)`). `replaceAllowedKeys(_:)` changes the list while it
/// runs (for connections made from then on). Each refusal is counted and
/// reported to `onRefusal` on the authenticator's thread, at most once per key per `reportInterval`
/// (a refused peer retries at every reconnect).
///
/// Start it before the server socket binds: without a ZAP handler, libzmq admits every CurveZMQ client.
/// Only one can run per context.
public final class ZAPAuthenticator: Sendable {
    /// The endpoint libzmq sends ZAP requests to (RFC 27).
    public static let endpoint = "inproc://zeromq.zap.01"

    private let state: ZAPThreadState

    private init(state: ZAPThreadState) { self.state = state }

    /// Starts the handler in `context`.
    ///
    /// - Throws: `ZeroMQError` when another ZAP handler already runs in `context` (`EADDRINUSE`).
    public static func start(
        context: MessagingContext, allowedKeys: Set<CurvePublicKey>, reportInterval: Duration = .seconds(60),
        onRefusal: @escaping @Sendable (ZAPRefusal) -> Void = { _ in }
    ) async throws -> ZAPAuthenticator {
        let allowed = Set(allowedKeys.compactMap { Z85Key.decode($0.z85) })
        let state = try ZAPThreadState(allowed: allowed, reportInterval: reportInterval, onRefusal: onRefusal)
        try await withCheckedThrowingContinuation { (started: CheckedContinuation<Void, any Error>) in
            let thread = Thread { runZAPThread(context: context, state: state, started: started) }
            thread.name = "zmq-zap"
            thread.start()
        }
        return ZAPAuthenticator(state: state)
    }

    /// Replaces the allow-list: handshakes from now on are decided by `keys` (connections already made
    /// stay; the server decides what their messages may do).
    public func replaceAllowedKeys(_ keys: Set<CurvePublicKey>) {
        let allowed = Set(keys.compactMap { Z85Key.decode($0.z85) })
        state.allowed.withLock { $0 = allowed }
    }

    /// Peers refused since the handler started.
    public var refusals: Int { state.refusals.load(ordering: .relaxed) }

    /// Peers admitted since the handler started.
    public var admissions: Int { state.admissions.load(ordering: .relaxed) }

    /// Closes the handler's socket and waits for its thread to end. Idempotent. Stop it after the server
    /// sockets it guards are closed.
    public func stop() async {
        await state.stop()
    }

    deinit { state.requestStop() }
}

/// What the handler's thread shares with the rest of the process.
final class ZAPThreadState: Sendable {
    struct Control {
        var stopping = false
        var finished = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    /// The raw 32-byte keys admitted; replaced by `ZAPAuthenticator.replaceAllowedKeys`.
    let allowed: InlineLock<Set<[UInt8]>>
    let reportInterval: Duration
    let onRefusal: @Sendable (ZAPRefusal) -> Void
    let control = InlineLock(Control())
    let refusals = Atomic<Int>(0)
    let admissions = Atomic<Int>(0)
    let wakeDescriptor: Int32

    init(allowed: Set<[UInt8]>, reportInterval: Duration, onRefusal: @escaping @Sendable (ZAPRefusal) -> Void) throws {
        let descriptor = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        guard descriptor >= 0 else { throw ZeroMQError(code: errno, operation: "eventfd") }
        self.wakeDescriptor = descriptor
        self.allowed = InlineLock(allowed)
        self.reportInterval = reportInterval
        self.onRefusal = onRefusal
    }

    deinit { Glibc.close(wakeDescriptor) }

    var isStopping: Bool { control.withLock { $0.stopping } }

    func requestStop() {
        control.withLock { $0.stopping = true }
        var one: UInt64 = 1
        _ = Glibc.write(wakeDescriptor, &one, 8)
    }

    func stop() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let finished = control.withLock { control in
                control.stopping = true
                if control.finished { return true }
                control.waiters.append(continuation)
                return false
            }
            if finished { continuation.resume() } else { requestStop() }
        }
    }

    func markFinished() {
        let waiters = control.withLock { control in
            control.finished = true
            defer { control.waiters = [] }
            return control.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}

/// The handler's thread: bind, then answer requests until stopped.
private func runZAPThread(
    context: MessagingContext, state: ZAPThreadState, started: CheckedContinuation<Void, any Error>
) {
    var options = SocketOptions()
    options.lingerMilliseconds = 0
    let socket: Socket
    do {
        socket = try Socket(context: context, kind: .reply, options: options)
        try socket.bind(ZAPAuthenticator.endpoint)
    } catch {
        state.markFinished()
        started.resume(throwing: error)
        return
    }
    started.resume()
    var handler = ZAPRequestHandler(state: state)
    var items = [zmq_pollitem_t](repeating: zmq_pollitem_t(), count: 2)
    items[0].socket = socket.handle
    items[0].events = Int16(ZMQ_POLLIN)
    items[1].fd = state.wakeDescriptor
    items[1].events = Int16(ZMQ_POLLIN)
    while !state.isStopping {
        items[0].revents = 0
        items[1].revents = 0
        if zmq_poll(&items, 2, -1) < 0 {
            if zmq_errno() == EINTR { continue }
            break  // ETERM
        }
        do {
            while let request = try socket.receive() {
                _ = try socket.send(handler.answer(request))
            }
        } catch {
            break
        }
    }
    socket.close()
    state.markFinished()
}

/// Decides ZAP requests; lives on the handler's thread only.
struct ZAPRequestHandler {
    let state: ZAPThreadState
    /// Per refused key: when it was last reported, and refusals since.
    private var reports: [String: (last: ContinuousClock.Instant, unreported: Int, total: Int)] = [:]

    init(state: ZAPThreadState) { self.state = state }

    /// The reply frames for one request (RFC 27): version, request ID, status code, status text,
    /// user ID, metadata.
    mutating func answer(_ frames: [[UInt8]]) -> [[UInt8]] {
        func reply(_ code: String, _ text: String, user: String = "") -> [[UInt8]] {
            [
                Array("1.0".utf8), frames.count > 1 ? frames[1] : [], Array(code.utf8), Array(text.utf8),
                Array(user.utf8), [],
            ]
        }
        guard frames.count >= 6, frames[0] == Array("1.0".utf8) else {
            return reply("500", "malformed ZAP request")
        }
        // A dual-stack socket (`tcp://*:PORT`) sees IPv4 peers as IPv4-mapped IPv6 addresses: shown as IPv4.
        var address = String(decoding: frames[3], as: UTF8.self)
        if address.lowercased().hasPrefix("::ffff:"), address.dropFirst(7).contains(".") {
            address = String(address.dropFirst(7))
        }
        let mechanism = String(decoding: frames[5], as: UTF8.self)
        if mechanism == "CURVE", frames.count >= 7, frames[6].count == 32 {
            let key = frames[6]
            let z85 = Z85Key.encode(key) ?? ""
            if state.allowed.withLock({ $0.contains(key) }) {
                state.admissions.add(1, ordering: .relaxed)
                return reply("200", "OK", user: z85)
            }
            refuse(address: address, key: z85, mechanism: mechanism, reason: "public key not on the allow-list")
            return reply("400", "public key not on the allow-list")
        }
        refuse(address: address, key: "", mechanism: mechanism, reason: "only CurveZMQ clients are accepted")
        return reply("400", "only CurveZMQ clients are accepted")
    }

    private mutating func refuse(address: String, key: String, mechanism: String, reason: String) {
        state.refusals.add(1, ordering: .relaxed)
        let name = key.isEmpty ? mechanism : key
        let now = ContinuousClock.now
        var entry = reports[name] ?? (last: now - state.reportInterval - .seconds(1), unreported: 0, total: 0)
        entry.total += 1
        entry.unreported += 1
        if now - entry.last >= state.reportInterval {
            state.onRefusal(
                ZAPRefusal(
                    address: address, publicKey: key, mechanism: mechanism, reason: reason,
                    total: entry.total, unreported: entry.unreported - 1))
            entry.last = now
            entry.unreported = 0
        }
        if reports.count > 10_000 { reports = [:] }  // bound the memory an attacker cycling keys can take
        reports[name] = entry
    }
}
