import CMicroHTTPD
import Foundation
import Runtime

/// An HTTP/1.1 server for small endpoints (metrics, the dashboard, health probes, the tests' origin
/// server) on GNU libmicrohttpd: each connection on a thread of its own, each request answered by
/// `handler` on that thread.
///
/// The handler may block its thread (never Swift's cooperative pool): to ask an actor, it uses
/// ``blockingAwait(_:)``; to wait, the ``StopSignal`` it is given, which is raised when the server stops.
/// Keep-alive, `HEAD`, chunked bodies of unknown size and `Content-Length` are libmicrohttpd's.
///
/// Limits (``Limits``): connections at once, seconds a connection may stay silent (a slow client that
/// sends its request a byte at a time is closed once it stops sending; one that keeps trickling is
/// bounded by the size of a request head), and the bytes of a request head.
///
/// ```swift
/// let server = try HTTPEndpointServer.start(host: "127.0.0.1", port: 0) { request, _ in
///     .complete(status: 200, headers: [("Content-Type", "text/plain")], body: Array("hello\n".utf8))
/// }
/// await server.shutdown()
/// ```
public final class HTTPEndpointServer: Sendable {
    /// Answers one request, on the connection's thread.
    public typealias Handler = @Sendable (HTTPEndpointRequest, StopSignal) -> HTTPEndpointReply

    /// What one server accepts.
    public struct Limits: Sendable {
        /// Connections served at once; more wait in the listen backlog (each is a thread).
        public var connections: Int
        /// Seconds a connection may send and receive nothing before it is closed (0: never).
        public var idleTimeoutSeconds: Int
        /// Bytes a connection may use for a request's head (request line and headers); a longer one is
        /// refused (431).
        public var requestHeadBytes: Int

        /// Limits for an endpoint on a network: 128 connections, 30 s of silence, 32 KiB of head.
        public static let endpoint = Limits(connections: 128, idleTimeoutSeconds: 30, requestHeadBytes: 32 * 1024)

        /// Limits of one's own choosing.
        public init(connections: Int, idleTimeoutSeconds: Int, requestHeadBytes: Int) {
            self.connections = connections
            self.idleTimeoutSeconds = idleTimeoutSeconds
            self.requestHeadBytes = requestHeadBytes
        }
    }

    /// The address bound.
    public let host: String
    /// The port bound (a port of 0 resolved).
    public let port: Int
    /// Raised when the server stops.
    public let stop: StopSignal
    private let daemon: InlineLock<DaemonHandle?>
    private let context: Unmanaged<HandlerContext>

    /// Starts serving on `host:port` (an address or name of this machine; port 0: any free port).
    ///
    /// - Throws: ``HTTPEndpointError`` when the address cannot be bound or the server not started.
    public static func start(
        host: String, port: Int, limits: Limits = .endpoint,
        handler: @escaping Handler
    ) throws -> HTTPEndpointServer {
        let socket = try ListeningSocket.make(host: host, port: port)
        let stop = StopSignal()
        let context = Unmanaged.passRetained(HandlerContext(handler: handler, stop: stop))
        guard
            let daemon = shiftwork_mhd_start(
                socket.descriptor, UInt32(clamping: limits.connections), UInt32(clamping: limits.idleTimeoutSeconds),
                limits.requestHeadBytes, accessHandler, context.toOpaque())
        else {
            context.release()
            close(socket.descriptor)
            // libmicrohttpd is loaded by the first start: its absence is told apart from a refusal.
            if let failure = shiftwork_mhd_load_failure() {
                throw HTTPEndpointError.libraryUnavailable(host: host, port: port, reason: String(cString: failure))
            }
            throw HTTPEndpointError.cannotStart(host: host, port: port)
        }
        return HTTPEndpointServer(
            host: host, port: socket.port, daemon: DaemonHandle(pointer: daemon), context: context, stop: stop)
    }

    private init(host: String, port: Int, daemon: DaemonHandle, context: Unmanaged<HandlerContext>, stop: StopSignal) {
        self.host = host
        self.port = port
        self.daemon = InlineLock(daemon)
        self.context = context
        self.stop = stop
    }

    /// Stops listening, wakes the handlers and bodies waiting on ``stop``, closes every connection and ends
    /// the server's threads; waits on a thread of its own. Idempotent.
    public func shutdown() async {
        guard let daemon = daemon.withLock({ $0.take() }) else { return }
        stop.raise()
        let context = self.context
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            Thread.detachNewThread {
                shiftwork_mhd_stop_daemon(daemon.pointer)
                context.release()
                continuation.resume()
            }
        }
    }

    /// ``shutdown()`` for callers outside a task (tests' `tearDown`, `deinit`): blocks the calling thread
    /// until the server's threads have ended. Called on one of the server's own connection threads (a
    /// handler stopping its server), it cannot wait for that thread: it raises ``stop`` and leaves the stop
    /// to a thread of its own, which waits for the calling thread's connection to end.
    public func shutdownBlocking() {
        guard let daemon = daemon.withLock({ $0.take() }) else { return }
        stop.raise()
        let context = self.context
        guard !ConnectionThreadMark.isConnectionThread(of: stop) else {
            Thread.detachNewThread {
                shiftwork_mhd_stop_daemon(daemon.pointer)
                context.release()
            }
            return
        }
        shiftwork_mhd_stop_daemon(daemon.pointer)
        context.release()
    }
}

/// The daemon's pointer, handed to the thread that stops it.
private struct DaemonHandle: @unchecked Sendable {
    // @unchecked: libmicrohttpd's daemon is used by its own threads; this side only stops it, once.
    let pointer: OpaquePointer
}

/// What the access handler reaches through its `cls`.
private final class HandlerContext: Sendable {
    let handler: HTTPEndpointServer.Handler
    let stop: StopSignal

    init(handler: @escaping HTTPEndpointServer.Handler, stop: StopSignal) {
        self.handler = handler
        self.stop = stop
    }

    /// Answers a request on `connection`.
    func answer(_ connection: OpaquePointer, method: String, target: String) -> MHD_Result {
        ConnectionThreadMark.mark(stop)
        let request = HTTPEndpointRequest(method: method, target: target, headers: Self.headers(of: connection))
        switch handler(request, stop) {
        case .drop:
            return .NO
        case .complete(let status, let headers, let body):
            let response = body.withUnsafeBytes { bytes in
                shiftwork_mhd_create_response_from_buffer(
                    bytes.count, UnsafeMutableRawPointer(mutating: bytes.baseAddress), .RESPMEM_MUST_COPY)
            }
            return Self.queue(response, status: status, headers: headers, on: connection)
        case .stream(let status, let headers, let size, let body):
            let pump = Unmanaged.passRetained(BodyPump(body: body, stop: stop))
            let response = shiftwork_mhd_create_response_from_callback(
                size.map { UInt64(max(0, $0)) } ?? shiftwork_mhd_size_unknown, 16 * 1024, readBody, pump.toOpaque(),
                finishBody)
            if response == nil {
                body.finish()
                pump.release()
            }
            return Self.queue(response, status: status, headers: headers, on: connection)
        }
    }

    private static func queue(
        _ response: OpaquePointer?, status: Int, headers: [(name: String, value: String)],
        on connection: OpaquePointer
    ) -> MHD_Result {
        guard let response else { return .NO }
        defer { shiftwork_mhd_destroy_response(response) }
        for (name, value) in headers {
            // Refused (a line break in the value): left out rather than sent broken.
            _ = shiftwork_mhd_add_response_header(response, name, value)
        }
        return shiftwork_mhd_queue_response(connection, UInt32(clamping: status), response)
    }

    /// The request's header lines, in order.
    private static func headers(of connection: OpaquePointer) -> [(name: String, value: String)] {
        let collected = HeaderList()
        let unmanaged = Unmanaged.passRetained(collected)
        defer { unmanaged.release() }
        _ = shiftwork_mhd_get_connection_values(
            connection, .HEADER_KIND,
            { cls, _, key, value in
                guard let cls, let key else { return .YES }
                let list = Unmanaged<HeaderList>.fromOpaque(cls).takeUnretainedValue()
                list.lines.append((String(cString: key), value.map { String(cString: $0) } ?? ""))
                return .YES
            }, unmanaged.toOpaque())
        return collected.lines
    }
}

/// Collects header lines during one `MHD_get_connection_values` call.
private final class HeaderList {
    var lines: [(name: String, value: String)] = []
}

/// Copies a body's pieces into libmicrohttpd's buffer; used by one connection's thread at a time.
private final class BodyPump: @unchecked Sendable {
    // @unchecked: libmicrohttpd calls the reader of one response from one thread, one call at a time.
    let body: any HTTPEndpointBody
    let stop: StopSignal
    private var pending: [UInt8] = []
    private var offset = 0

    init(body: any HTTPEndpointBody, stop: StopSignal) {
        self.body = body
        self.stop = stop
    }

    /// Fills up to `capacity` bytes at `buffer`; the count, or libmicrohttpd's end of stream.
    func read(into buffer: UnsafeMutablePointer<CChar>, capacity: Int) -> Int {
        ConnectionThreadMark.mark(stop)
        while offset >= pending.count {
            guard let next = body.next(stop: stop) else { return shiftwork_mhd_end_of_stream }
            pending = next
            offset = 0
        }
        let count = min(capacity, pending.count - offset)
        pending.withUnsafeBytes { bytes in
            guard let base = bytes.baseAddress else { return }
            UnsafeMutableRawPointer(buffer).copyMemory(from: base + offset, byteCount: count)
        }
        offset += count
        return count
    }
}

/// Called when a request's head has arrived, then again for each piece of its body and once at its end.
/// GET and HEAD are answered at the end of the request, which keeps the connection alive for the next
/// one; other methods at once (libmicrohttpd then closes the connection rather than read their body).
private let accessHandler: MHD_AccessHandlerCallback = { cls, connection, _, method, _, _, uploadSize, requestSlot in
    guard let cls, let connection, let method, let requestSlot,
        let request = requestSlot.pointee?.assumingMemoryBound(to: shiftwork_mhd_request.self),
        let target = request.pointee.target
    else { return .NO }
    let methodName = String(cString: method)
    switch request.pointee.answered {
    case 0 where methodName == "GET" || methodName == "HEAD":
        request.pointee.answered = 1
        return .YES
    case 1 where (uploadSize?.pointee ?? 0) > 0:
        // A body on a GET: read and left unused.
        uploadSize?.pointee = 0
        return .YES
    case 0, 1:
        request.pointee.answered = 2
        let context = Unmanaged<HandlerContext>.fromOpaque(cls).takeUnretainedValue()
        return context.answer(connection, method: methodName, target: String(cString: target))
    default:
        // A body after the response was queued: discarded.
        uploadSize?.pointee = 0
        return .YES
    }
}

private let readBody: MHD_ContentReaderCallback = { cls, _, buffer, capacity in
    guard let cls, let buffer else { return shiftwork_mhd_end_with_error }
    return Unmanaged<BodyPump>.fromOpaque(cls).takeUnretainedValue().read(into: buffer, capacity: capacity)
}

private let finishBody: MHD_ContentReaderFreeCallback = { cls in
    guard let cls else { return }
    let pump = Unmanaged<BodyPump>.fromOpaque(cls)
    ConnectionThreadMark.mark(pump.takeUnretainedValue().stop)
    pump.takeUnretainedValue().body.finish()
    pump.release()
}
