import Foundation
import HTTPEndpoints
import Runtime
import XCTest

/// `HTTPEndpointServer` on 127.0.0.1 through plain sockets: keep-alive, HEAD, dropped connections, the
/// limits (request head size, silent connections), a stop that ends a waiting body, and bind errors.
final class HTTPEndpointServerTests: XCTestCase {
    private static func text(_ status: Int, _ body: String) -> HTTPEndpointReply {
        .complete(status: status, headers: [("Content-Type", "text/plain")], body: Array(body.utf8))
    }

    func testTwoRequestsOnOneConnectionAndHEADWithoutABody() throws {
        let seen = InlineLock<[String]>([])
        let server = try HTTPEndpointServer.start(host: "127.0.0.1", port: 0) { request, _ in
            seen.withLock { $0.append("\(request.method) \(request.target) \(request.header("x-probe") ?? "-")") }
            return Self.text(200, "hello \(request.path)\n")
        }
        defer { server.shutdownBlocking() }
        let connection = try RawConnection(port: server.port)
        connection.send("GET /a?b=%20c HTTP/1.1\r\nHost: x\r\nX-Probe: one\r\n\r\n")
        let first = try XCTUnwrap(connection.readResponse(), "the first response")
        XCTAssertTrue(first.head.hasPrefix("HTTP/1.1 200"), first.head)
        XCTAssertEqual(first.body, "hello /a\n")
        XCTAssertFalse(first.head.lowercased().contains("connection: close"), "kept alive: \(first.head)")
        connection.send("HEAD /b HTTP/1.1\r\nHost: x\r\n\r\n")
        let second = try XCTUnwrap(connection.readResponse(headOnly: true), "a second response on the same connection")
        XCTAssertTrue(second.head.hasPrefix("HTTP/1.1 200"), second.head)
        XCTAssertTrue(
            second.head.contains("Content-Length: 9"), "HEAD tells the length of the GET's body: \(second.head)")
        connection.send("GET /c HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        let rest = connection.readUntilClosed()
        XCTAssertTrue(rest.closed)
        XCTAssertTrue(rest.received.hasSuffix("hello /c\n"), rest.received)
        XCTAssertEqual(seen.withLock { $0 }, ["GET /a?b=%20c one", "HEAD /b -", "GET /c -"], "the target as sent")
    }

    func testADroppedRequestClosesTheConnectionWithoutAnAnswer() throws {
        let server = try HTTPEndpointServer.start(host: "127.0.0.1", port: 0) { _, _ in .drop }
        defer { server.shutdownBlocking() }
        let connection = try RawConnection(port: server.port)
        connection.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        let result = connection.readUntilClosed()
        XCTAssertTrue(result.closed)
        XCTAssertEqual(result.received, "")
    }

    func testARequestHeadBeyondTheLimitIsRefusedWithoutReachingTheHandler() throws {
        let called = InlineLock(false)
        let limits = HTTPEndpointServer.Limits(connections: 8, idleTimeoutSeconds: 30, requestHeadBytes: 8 * 1024)
        let server = try HTTPEndpointServer.start(host: "127.0.0.1", port: 0, limits: limits) { _, _ in
            called.withLock { $0 = true }
            return Self.text(200, "ok")
        }
        defer { server.shutdownBlocking() }
        let connection = try RawConnection(port: server.port)
        connection.send("GET / HTTP/1.1\r\nHost: x\r\nX-Padding: \(String(repeating: "a", count: 16 * 1024))\r\n\r\n")
        let result = connection.readUntilClosed()
        XCTAssertTrue(result.closed)
        XCTAssertTrue(result.received.hasPrefix("HTTP/1.1 4"), "a 4xx refusal: \(result.received.prefix(80))")
        XCTAssertFalse(called.withLock { $0 })
    }

    func testAConnectionThatStopsSendingHalfwayIsClosedAfterTheIdleTimeout() throws {
        let limits = HTTPEndpointServer.Limits(connections: 8, idleTimeoutSeconds: 1, requestHeadBytes: 8 * 1024)
        let server = try HTTPEndpointServer.start(host: "127.0.0.1", port: 0, limits: limits) { _, _ in
            Self.text(200, "ok")
        }
        defer { server.shutdownBlocking() }
        let connection = try RawConnection(port: server.port)
        connection.send("GET / HTTP/1.1\r\nHo")
        let result = connection.readUntilClosed()
        XCTAssertTrue(result.closed, "closed by the server, not by the 30 s read timeout")
        XCTAssertFalse(result.received.contains("200"), result.received)
    }

    func testStoppingEndsABodyThatWaitsAndFinishesIt() throws {
        let body = WaitingBody()
        let server = try HTTPEndpointServer.start(host: "127.0.0.1", port: 0) { _, _ in
            .stream(status: 200, headers: [("Content-Type", "text/event-stream")], size: nil, body: body)
        }
        let connection = try RawConnection(port: server.port)
        connection.send("GET /events HTTP/1.1\r\nHost: x\r\n\r\n")
        body.started.wait(seconds: 60)
        XCTAssertTrue(body.started.isRaised, "the body was asked for its second piece")
        let stopper = Thread { server.shutdownBlocking() }
        stopper.start()
        let result = connection.readUntilClosed()
        XCTAssertTrue(result.closed, "the stop closed the stream")
        XCTAssertTrue(result.received.contains("first"), result.received)
        XCTAssertTrue(result.received.contains("Transfer-Encoding: chunked"), result.received)
        body.finished.wait(seconds: 60)
        XCTAssertTrue(body.finished.isRaised, "finish() was called")
    }

    /// A handler that stops its own server (or releases its last reference, which stops a test's server)
    /// runs on one of the server's connection threads: the stop must not wait for that thread.
    func testAHandlerThatStopsItsOwnServerDoesNotHang() throws {
        let box = InlineLock<HTTPEndpointServer?>(nil)
        let stopped = StopSignal()
        let server = try HTTPEndpointServer.start(host: "127.0.0.1", port: 0) { _, _ in
            box.withLock { $0 }?.shutdownBlocking()
            stopped.raise()
            return Self.text(200, "stopping\n")
        }
        box.withLock { $0 = server }
        let connection = try RawConnection(port: server.port)
        connection.send("GET /stop HTTP/1.1\r\nHost: x\r\n\r\n")
        stopped.wait(seconds: 60)
        XCTAssertTrue(stopped.isRaised, "shutdownBlocking() returned on the handler's own thread")
        XCTAssertTrue(server.stop.isRaised)
        XCTAssertTrue(connection.readUntilClosed().closed, "the connection ends with the server")
        // Once its threads have ended, the port is free again.
        var rebound: HTTPEndpointServer?
        for _ in 0..<600 where rebound == nil {
            rebound = try? HTTPEndpointServer.start(host: "127.0.0.1", port: server.port) { _, _ in .drop }
            if rebound == nil { usleep(100_000) }
        }
        XCTAssertNotNil(rebound, "port \(server.port) was released by the stop")
        rebound?.shutdownBlocking()
        box.withLock { $0 = nil }
    }

    func testEveryInterfaceServesIPv4AndIPv6ClientsOnOnePort() throws {
        let server = try HTTPEndpointServer.start(host: "*", port: 0) { request, _ in
            Self.text(200, "at \(request.path)\n")
        }
        defer { server.shutdownBlocking() }
        let overIPv4 = try RawConnection(port: server.port, host: "127.0.0.1")
        overIPv4.send("GET /four HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        XCTAssertTrue(overIPv4.readUntilClosed().received.hasSuffix("at /four\n"))
        // A kernel without IPv6 makes `*` IPv4's 0.0.0.0 alone: the IPv4 half above is then all there is.
        guard Self.hasIPv6Loopback() else { throw XCTSkip("this kernel has no IPv6 loopback: only IPv4 was checked") }
        let overIPv6 = try RawConnection(port: server.port, host: "::1")
        overIPv6.send("GET /six HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        XCTAssertTrue(overIPv6.readUntilClosed().received.hasSuffix("at /six\n"))
    }

    /// Whether `::1` can be bound here (a kernel with IPv6, loopback up).
    private static func hasIPv6Loopback() -> Bool {
        let probe = socket(AF_INET6, Int32(SOCK_STREAM.rawValue), 0)
        guard probe >= 0 else { return false }
        defer { close(probe) }
        var address = sockaddr_in6()
        address.sin6_family = sa_family_t(AF_INET6)
        address.sin6_addr = in6addr_loopback
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(probe, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
            }
        } == 0
    }

    func testABusyPortIsAnErrorThatNamesTheAddress() throws {
        let server = try HTTPEndpointServer.start(host: "127.0.0.1", port: 0) { _, _ in .drop }
        defer { server.shutdownBlocking() }
        XCTAssertThrowsError(try HTTPEndpointServer.start(host: "127.0.0.1", port: server.port) { _, _ in .drop }) {
            error in
            let text = String(describing: error)
            XCTAssertTrue(text.contains("127.0.0.1:\(server.port)"), text)
            XCTAssertTrue(text.lowercased().contains("in use"), text)
        }
        XCTAssertThrowsError(try HTTPEndpointServer.start(host: "no-such-host.invalid", port: 0) { _, _ in .drop })
    }
}

/// A body that sends "first", then waits for the server to stop.
private final class WaitingBody: HTTPEndpointBody, @unchecked Sendable {
    let started = StopSignal()
    let finished = StopSignal()
    private var sent = false

    func next(stop: StopSignal) -> [UInt8]? {
        if !sent {
            sent = true
            return Array("first\n".utf8)
        }
        started.raise()
        stop.wait(seconds: nil)
        return nil
    }

    func finish() { finished.raise() }
}
