import Foundation
import XCTest

@testable import Messaging

/// Each message a CurveZMQ server receives names the key its sender authenticated with, read by the
/// socket's thread (`appendsPeerKey`), and the ZAP handler's allow-list can be replaced while it runs.
final class PeerKeyTests: XCTestCase {
    func testEveryMessageCarriesItsSendersKeyAndAReplacedAllowListAdmitsANewKey() async throws {
        let context = try MessagingContext()
        let serverKeys = try CurveKeyPair.generate()
        let alice = try CurveKeyPair.generate()
        let bob = try CurveKeyPair.generate()
        let authenticator = try await ZAPAuthenticator.start(context: context, allowedKeys: [alice.publicKey])
        var serverOptions = SocketOptions()
        serverOptions.curve = .server(serverKeys)
        let router = try await SocketChannel.open(
            context: context, kind: .router, options: serverOptions, bind: ["tcp://127.0.0.1:*"], name: "router",
            appendsPeerKey: true)
        let endpoint = try XCTUnwrap(router.boundEndpoint)
        var received = router.messages.makeAsyncIterator()

        func dealer(
            _ keys: CurveKeyPair, _ name: String, onFailure: (@Sendable (HandshakeFailure) -> Void)? = nil
        ) async throws -> SocketChannel {
            var options = SocketOptions()
            options.curve = .client(keys, serverKey: serverKeys.publicKey)
            options.identity = Array(name.utf8)
            return try await SocketChannel.open(
                context: context, kind: .dealer, options: options, connect: [endpoint],
                name: name, onHandshakeFailure: onFailure)
        }

        // Alice's message arrives with her key last; a frame she adds to pose as Bob is only one more frame.
        let aliceChannel = try await dealer(alice, "alice")
        aliceChannel.send([Array("hello".utf8)])
        let firstNext = await received.next()
        let first = try XCTUnwrap(firstNext)
        XCTAssertEqual(first, [Array("alice".utf8), Array("hello".utf8), Array(alice.publicKey.z85.utf8)])
        let split = PeerKeyFrame.split(first)
        XCTAssertEqual(Array(split.frames), [Array("alice".utf8), Array("hello".utf8)])
        XCTAssertEqual(split.key, alice.publicKey)
        aliceChannel.send([Array("hello".utf8), Array(bob.publicKey.z85.utf8)])
        let forgedNext = await received.next()
        let forged = try XCTUnwrap(forgedNext)
        XCTAssertEqual(forged.count, 4)
        XCTAssertEqual(PeerKeyFrame.split(forged).key, alice.publicKey)

        // Bob is refused until the list is replaced; then his next connection gets in, with his key.
        let (failures, report) = AsyncStream<HandshakeFailure>.makeStream()
        let bobRefused = try await dealer(bob, "bob-1", onFailure: { report.yield($0) })
        bobRefused.send([Array("early".utf8)])
        var failureIterator = failures.makeAsyncIterator()
        let failure = await failureIterator.next()
        XCTAssertEqual(failure?.reason, .refused(statusCode: 400))
        await bobRefused.close()
        authenticator.replaceAllowedKeys([alice.publicKey, bob.publicKey])
        let bobChannel = try await dealer(bob, "bob-2")
        bobChannel.send([Array("admitted".utf8)])
        let fromBobNext = await received.next()
        let fromBob = try XCTUnwrap(fromBobNext)
        XCTAssertEqual(fromBob, [Array("bob-2".utf8), Array("admitted".utf8), Array(bob.publicKey.z85.utf8)])

        await aliceChannel.close()
        await bobChannel.close()
        await router.close()
        await authenticator.stop()
        await context.terminate()
    }

    func testWithoutCurveZMQTheKeyFrameIsEmpty() async throws {
        let context = try MessagingContext()
        let router = try await SocketChannel.open(
            context: context, kind: .router, bind: ["inproc://plain-keys"],
            name: "router", appendsPeerKey: true)
        var options = SocketOptions()
        options.identity = Array("plain".utf8)
        let dealer = try await SocketChannel.open(
            context: context, kind: .dealer, options: options,
            connect: ["inproc://plain-keys"], name: "dealer")
        dealer.send([Array("hi".utf8)])
        var received = router.messages.makeAsyncIterator()
        let messageNext = await received.next()
        let message = try XCTUnwrap(messageNext)
        XCTAssertEqual(message, [Array("plain".utf8), Array("hi".utf8), []])
        XCTAssertNil(PeerKeyFrame.split(message).key)
        await dealer.close()
        await router.close()
        await context.terminate()
    }
}
