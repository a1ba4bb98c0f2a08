import Messaging
import XCTest

final class SocketChannelTests: XCTestCase {
    func testRouterDealerRoundTripOverLoopbackTCP() async throws {
        let context = try MessagingContext()
        let router = try await SocketChannel.open(
            context: context, kind: .router, bind: ["tcp://127.0.0.1:*"], name: "router")
        let endpoint = try XCTUnwrap(router.boundEndpoint)
        XCTAssertTrue(endpoint.hasPrefix("tcp://127.0.0.1:"), endpoint)
        XCTAssertFalse(endpoint.hasSuffix(":*"))

        var options = SocketOptions()
        options.identity = Array("dealer-1".utf8)
        let dealer = try await SocketChannel.open(
            context: context, kind: .dealer, options: options, connect: [endpoint], name: "dealer")

        dealer.send([[1, 2, 3], []])
        var routerMessages = router.messages.makeAsyncIterator()
        let next = await routerMessages.next()
        let received = try XCTUnwrap(next)
        XCTAssertEqual(received, [Array("dealer-1".utf8), [1, 2, 3], []])

        let large = [UInt8](repeating: 7, count: 3 << 20)
        router.send([Array("dealer-1".utf8), large])
        var dealerMessages = dealer.messages.makeAsyncIterator()
        let nextReply = await dealerMessages.next()
        let reply = try XCTUnwrap(nextReply)
        XCTAssertEqual(reply, [large])

        await dealer.close()
        await router.close()
        await context.terminate()
    }

    func testMessagesSentTogetherArriveInOrderInFewBatches() async throws {
        let context = try MessagingContext()
        let router = try await SocketChannel.open(
            context: context, kind: .router, bind: ["inproc://batch-test"], name: "router")
        let dealer = try await SocketChannel.open(
            context: context, kind: .dealer, connect: ["inproc://batch-test"], name: "dealer")
        let count = 5_000
        for start in stride(from: 0, to: count, by: 500) {
            dealer.send(
                contentsOf: (start..<start + 500).map { [withUnsafeBytes(of: UInt32($0).littleEndian, Array.init)] })
        }
        var expected: UInt32 = 0
        var batches = 0
        for await batch in router.messageBatches {
            XCTAssertFalse(batch.isEmpty, "a batch holds at least one message")
            batches += 1
            for message in batch {
                XCTAssertEqual(message.count, 2)
                let value = message[1].withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }
                XCTAssertEqual(UInt32(littleEndian: value), expected)
                expected += 1
            }
            if expected == count { break }
        }
        XCTAssertEqual(expected, UInt32(count))
        XCTAssertLessThan(batches, count, "messages waiting together are delivered together")
        dealer.send(contentsOf: [])
        await dealer.close()
        await router.close()
        await context.terminate()
    }

    func testOrderIsPreservedForManyMessagesOverInproc() async throws {
        let context = try MessagingContext()
        let router = try await SocketChannel.open(
            context: context, kind: .router, bind: ["inproc://order-test"], name: "router")
        let dealer = try await SocketChannel.open(
            context: context, kind: .dealer, connect: ["inproc://order-test"], name: "dealer")
        let count = 20_000
        let sender = Task {
            for index in 0..<count {
                dealer.send([withUnsafeBytes(of: UInt32(index).littleEndian, Array.init)])
            }
        }
        var expected: UInt32 = 0
        for await message in router.messages {
            XCTAssertEqual(message.count, 2)
            let value = message[1].withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }
            XCTAssertEqual(UInt32(littleEndian: value), expected)
            expected += 1
            if expected == count { break }
        }
        await sender.value
        XCTAssertEqual(expected, UInt32(count))
        await dealer.close()
        await router.close()
        await context.terminate()
    }

    func testUnroutableMessagesAreCountedNotFatal() async throws {
        let context = try MessagingContext()
        let router = try await SocketChannel.open(
            context: context, kind: .router, bind: ["inproc://unroutable"], name: "router")
        router.send([Array("nobody".utf8), [1]])
        router.send([Array("nobody".utf8), [2]])
        for _ in 0..<200 where router.droppedMessages < 2 {
            try await Task.sleep(for: .milliseconds(10))
        }
        XCTAssertEqual(router.droppedMessages, 2)
        await router.close()
        router.send([Array("nobody".utf8), [3]])  // after close: dropped, counted
        XCTAssertEqual(router.droppedMessages, 3)
        await context.terminate()
    }

    func testBindingAnEndpointInUseFailsWithAClearError() async throws {
        let context = try MessagingContext()
        let first = try await SocketChannel.open(
            context: context, kind: .router, bind: ["tcp://127.0.0.1:*"], name: "first")
        let endpoint = try XCTUnwrap(first.boundEndpoint)
        do {
            _ = try await SocketChannel.open(context: context, kind: .router, bind: [endpoint], name: "second")
            XCTFail("binding \(endpoint) twice should fail")
        } catch let error as ZeroMQError {
            XCTAssertTrue(error.description.contains("bind \(endpoint)"), error.description)
            XCTAssertTrue(error.description.contains("in use"), error.description)
        }
        do {
            _ = try await SocketChannel.open(context: context, kind: .dealer, connect: ["nonsense"], name: "bad")
            XCTFail("a malformed endpoint should fail")
        } catch let error as ZeroMQError {
            XCTAssertTrue(error.description.contains("connect nonsense"), error.description)
        }
        await first.close()
        await context.terminate()
    }

    func testCloseWithAnUnreachablePeerDoesNotHang() async throws {
        let context = try MessagingContext()
        var options = SocketOptions()
        options.lingerMilliseconds = 100
        // Nobody listens on this port: messages stay queued; close must still return promptly.
        let dealer = try await SocketChannel.open(
            context: context, kind: .dealer, options: options, connect: ["tcp://127.0.0.1:9"], name: "dealer")
        for _ in 0..<10 { dealer.send([[0]]) }
        let clock = ContinuousClock()
        let elapsed = await clock.measure {
            await dealer.close()
            await context.terminate()
        }
        XCTAssertLessThan(elapsed, .seconds(5), "close and terminate must be bounded by the linger")
    }

    func testMessagesStreamFinishesOnClose() async throws {
        let context = try MessagingContext()
        let pair = try await SocketChannel.open(
            context: context, kind: .pair, bind: ["inproc://finish"], name: "pair")
        let consumer = Task { () -> Int in
            var count = 0
            for await _ in pair.messages { count += 1 }
            return count
        }
        await pair.close()
        let count = await consumer.value
        XCTAssertEqual(count, 0)
        await context.terminate()
    }
}
