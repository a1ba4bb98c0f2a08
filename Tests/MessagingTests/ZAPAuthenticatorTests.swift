import Foundation
import Runtime
import XCTest

@testable import Messaging

/// The ZAP handler with real CurveZMQ sockets over loopback TCP: a listed key gets in, an unlisted one
/// is refused (and told so through the monitor), the refusal is counted and reported.
final class ZAPAuthenticatorTests: XCTestCase {
    func testListedKeyGetsInUnlistedKeyIsRefusedCountedAndReported() async throws {
        let context = try MessagingContext()
        let serverKeys = try CurveKeyPair.generate()
        let listed = try CurveKeyPair.generate()
        let unlisted = try CurveKeyPair.generate()
        let reports = InlineLock<[ZAPRefusal]>([])
        let authenticator = try await ZAPAuthenticator.start(
            context: context, allowedKeys: [listed.publicKey],
            onRefusal: { refusal in reports.withLock { $0.append(refusal) } })

        var serverOptions = SocketOptions()
        serverOptions.curve = .server(serverKeys)
        let router = try await SocketChannel.open(
            context: context, kind: .router, options: serverOptions, bind: ["tcp://127.0.0.1:*"], name: "router")
        let endpoint = try XCTUnwrap(router.boundEndpoint)

        // The unlisted peer: refused with ZAP status 400, reported by its socket's monitor.
        let (failures, report) = AsyncStream<HandshakeFailure>.makeStream()
        var intruderOptions = SocketOptions()
        intruderOptions.curve = .client(unlisted, serverKey: serverKeys.publicKey)
        let intruder = try await SocketChannel.open(
            context: context, kind: .dealer, options: intruderOptions, connect: [endpoint], name: "intruder",
            onHandshakeFailure: { report.yield($0) })
        intruder.send([Array("let me in".utf8)])
        var failureIterator = failures.makeAsyncIterator()
        let failure = await failureIterator.next()
        XCTAssertEqual(failure?.reason, .refused(statusCode: 400))
        XCTAssertEqual(failure?.endpoint, endpoint)

        // The listed peer gets through, encrypted, both ways.
        var friendOptions = SocketOptions()
        friendOptions.curve = .client(listed, serverKey: serverKeys.publicKey)
        friendOptions.identity = Array("friend".utf8)
        let friend = try await SocketChannel.open(
            context: context, kind: .dealer, options: friendOptions, connect: [endpoint], name: "friend")
        friend.send([Array("hello".utf8)])
        var routerMessages = router.messages.makeAsyncIterator()
        let received = await routerMessages.next()
        XCTAssertEqual(received, [Array("friend".utf8), Array("hello".utf8)], "only the listed peer's message arrives")
        router.send([Array("friend".utf8), Array("welcome".utf8)])
        var friendMessages = friend.messages.makeAsyncIterator()
        let reply = await friendMessages.next()
        XCTAssertEqual(reply, [Array("welcome".utf8)])

        XCTAssertGreaterThanOrEqual(authenticator.refusals, 1)
        XCTAssertGreaterThanOrEqual(authenticator.admissions, 1)
        let first = try XCTUnwrap(reports.withLock { $0.first })
        XCTAssertEqual(first.publicKey, unlisted.publicKey.z85)
        XCTAssertEqual(first.mechanism, "CURVE")
        XCTAssertEqual(first.address, "127.0.0.1")
        XCTAssertEqual(
            reports.withLock { $0.count }, 1,
            "retries of the same key within the report interval are counted, not reported again")

        // A second handler in the same context cannot start: the ZAP endpoint is taken.
        do {
            let second = try await ZAPAuthenticator.start(context: context, allowedKeys: [])
            await second.stop()
            XCTFail("a second ZAP handler started in the same context")
        } catch {}

        await intruder.close()
        await friend.close()
        await router.close()
        await authenticator.stop()
        await authenticator.stop()  // idempotent
        await context.terminate()
    }

    func testAPlainPeerCannotTalkToACurveServer() async throws {
        let context = try MessagingContext()
        let serverKeys = try CurveKeyPair.generate()
        let authenticator = try await ZAPAuthenticator.start(context: context, allowedKeys: [])
        var serverOptions = SocketOptions()
        serverOptions.curve = .server(serverKeys)
        let router = try await SocketChannel.open(
            context: context, kind: .router, options: serverOptions, bind: ["tcp://127.0.0.1:*"], name: "router")
        let plain = try await SocketChannel.open(
            context: context, kind: .dealer, connect: [try XCTUnwrap(router.boundEndpoint)], name: "plain")
        plain.send([Array("hello".utf8)])
        let arrived = Task { () -> Bool in
            var iterator = router.messages.makeAsyncIterator()
            return await iterator.next() != nil
        }
        try await Task.sleep(for: .milliseconds(800))
        await plain.close()
        await router.close()
        let gotSomething = await arrived.value
        XCTAssertFalse(gotSomething, "a peer without CurveZMQ reached the server")
        await authenticator.stop()
        await context.terminate()
    }
}
