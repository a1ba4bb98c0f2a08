import Messaging
import XCTest

/// The bounded bridge between a socket's thread and its consumer (`InboundWatermarks`): a consumer that
/// lags holds the socket's thread back, which leaves messages in libzmq, whose high-water mark holds the
/// sender back. Real sockets over loopback TCP.
final class SocketChannelBackPressureTests: XCTestCase {
    func testASlowConsumerHoldsAFastProducerBackWithinTheHighWatermarkLosingNothing() async throws {
        let context = try MessagingContext()
        let watermarks = InboundWatermarks(high: 64, low: 16)
        let router = try await SocketChannel.open(
            context: context, kind: .router, bind: ["tcp://127.0.0.1:*"], name: "router", inboundWatermarks: watermarks)
        let endpoint = try XCTUnwrap(router.boundEndpoint)
        var options = SocketOptions()
        options.identity = Array("fast-producer".utf8)
        let dealer = try await SocketChannel.open(
            context: context, kind: .dealer, options: options, connect: [endpoint], name: "dealer")
        let count = 20_000
        for start in stride(from: 0, to: count, by: 1_000) {
            dealer.send(
                contentsOf: (start..<start + 1_000).map { [withUnsafeBytes(of: UInt32($0).littleEndian, Array.init)] })
        }

        // Nothing consumed yet: the channel fills up to its high watermark and stops there.
        for _ in 0..<2_000 where router.bufferedInboundMessages < watermarks.high {
            try await Task.sleep(for: .milliseconds(5))
        }
        try await Task.sleep(for: .milliseconds(100))
        XCTAssertEqual(
            router.bufferedInboundMessages, watermarks.high, "the socket's thread stopped reading at the mark")

        // A slow consumer: everything arrives, in order, and the channel never held more than the mark.
        var expected: UInt32 = 0
        for await message in router.messages {
            XCTAssertEqual(message.first, Array("fast-producer".utf8))
            let value = message[1].withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }
            XCTAssertEqual(UInt32(littleEndian: value), expected, "order kept")
            expected += 1
            if expected % 500 == 0 { try await Task.sleep(for: .milliseconds(1)) }
            if expected == count { break }
        }
        XCTAssertEqual(expected, UInt32(count), "nothing lost")
        XCTAssertEqual(router.peakBufferedInboundMessages, watermarks.high, "never above the high watermark")
        XCTAssertEqual(router.bufferedInboundMessages, 0)
        await dealer.close()
        await router.close()
        await context.terminate()
    }

    func testAConsumerCancelledWhileWaitingEndsItsIterationAndTheChannelStillCloses() async throws {
        let context = try MessagingContext()
        let pair = try await SocketChannel.open(
            context: context, kind: .pair, bind: ["inproc://cancelled"], name: "pair")
        let consumer = Task { () -> Int in
            var count = 0
            for await _ in pair.messageBatches { count += 1 }
            return count
        }
        consumer.cancel()
        let consumed = await consumer.value
        XCTAssertEqual(consumed, 0)
        await pair.close()
        await context.terminate()
    }
}
