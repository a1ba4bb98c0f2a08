import Synchronization
import XCTest

@testable import Messaging

/// The hand-over between a socket's thread and its consumer (`InboundBuffer`), driven directly: the
/// producer's allowance stops at the high watermark and comes back only at the low one (hysteresis, as
/// NIO's `NIOAsyncSequenceProducer`), waking the producer once; order is kept and the end comes after
/// what is held.
final class InboundBufferTests: XCTestCase {
    private final class Wakes: Sendable {
        let count = Atomic<Int>(0)
    }

    private func message(_ value: UInt8) -> [[[UInt8]]] { [[[value]]] }

    func testReadingStopsAtTheHighWatermarkAndResumesOnlyAtTheLowOne() async {
        let wakes = Wakes()
        let buffer = InboundBuffer(watermarks: InboundWatermarks(high: 4, low: 1)) {
            wakes.count.add(1, ordering: .relaxed)
        }
        XCTAssertEqual(buffer.capacity(), 4)
        for value in UInt8(0)..<4 { buffer.append(message(value)) }
        XCTAssertEqual(buffer.capacity(), 0, "full: the producer stops reading")
        XCTAssertEqual(buffer.peakBufferedMessages, 4)

        let first = await buffer.next()
        XCTAssertEqual(first, message(0))
        XCTAssertEqual(buffer.capacity(), 0, "above the low watermark the producer still waits")
        let second = await buffer.next()
        XCTAssertEqual(second, message(1))
        XCTAssertEqual(wakes.count.load(ordering: .relaxed), 0)
        let third = await buffer.next()
        XCTAssertEqual(third, message(2))
        XCTAssertEqual(wakes.count.load(ordering: .relaxed), 1, "at the low watermark the producer is woken, once")
        XCTAssertEqual(buffer.capacity(), 3)

        buffer.append([[[4]], [[5]]])
        buffer.finish()
        buffer.append(message(6))  // after the end: not handed out
        let fourth = await buffer.next()
        XCTAssertEqual(fourth, message(3))
        let fifth = await buffer.next()
        XCTAssertEqual(fifth, [[[4]], [[5]]], "a group stays a group")
        let end = await buffer.next()
        XCTAssertNil(end)
        XCTAssertEqual(buffer.bufferedMessages, 0)
    }

    func testAWaitingConsumerGetsTheNextGroupDirectly() async {
        let buffer = InboundBuffer(watermarks: .standard) {}
        async let received = buffer.next(isolation: nil)
        // The group goes straight to the consumer once it waits, or is held until it asks: either way it arrives.
        buffer.append(message(9))
        let group = await received
        XCTAssertEqual(group, message(9))
        XCTAssertEqual(buffer.bufferedMessages, 0)
    }
}
