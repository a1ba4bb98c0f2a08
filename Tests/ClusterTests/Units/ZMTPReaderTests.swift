import ClusterSimulation
import XCTest

/// The simulation's own ZMTP framing (`ZMTPFraming`, `ZMTPReader`) on bytes alone; `ZMTPDealerTests`
/// holds it to a real coordinator's libzmq socket.
final class ZMTPReaderTests: XCTestCase {
    private enum Seen: Equatable {
        case message([UInt8])
        case command(String, [UInt8])
    }

    /// Reads `chunks` one after another, as separate `recv`s gave them.
    private func read(_ chunks: [[UInt8]], into reader: inout ZMTPReader) throws -> [Seen] {
        var seen: [Seen] = []
        for chunk in chunks {
            try chunk.withUnsafeBytes { bytes in
                try reader.read(bytes) { event in
                    switch event {
                    case .message(let body): seen.append(.message(Array(body)))
                    case .command(let name, let body): seen.append(.command(name, Array(body)))
                    }
                }
            }
        }
        return seen
    }

    private func message(_ payload: [UInt8]) -> [UInt8] {
        var bytes: [UInt8] = []
        payload.withUnsafeBytes { ZMTPFraming.appendMessage($0, to: &bytes) }
        return bytes
    }

    func testGreetingReadyAndMessagesAreReadWhateverTheCutsBetweenReads() throws {
        let long = (0..<1_000).map { UInt8(truncatingIfNeeded: $0) }
        let stream =
            ZMTPFraming.greeting + ZMTPFraming.ready(identity: Array("w-1".utf8)) + message([1, 2, 3])
            + message(long) + message([])
        var whole = ZMTPReader()
        let expected = try read([stream], into: &whole)
        XCTAssertEqual(expected.count, 4)
        XCTAssertEqual(expected.dropFirst(), [.message([1, 2, 3]), .message(long), .message([])])
        guard case .command("READY", let properties) = expected[0] else { return XCTFail("\(expected[0])") }
        XCTAssertTrue(properties.starts(with: [11] + Array("Socket-Type".utf8) + [0, 0, 0, 6] + Array("DEALER".utf8)))
        XCTAssertTrue(properties.reversed().starts(with: Array("w-1".utf8).reversed()), "the identity last")
        // The same bytes cut everywhere: one byte at a time, and in chunks of 7.
        var bytewise = ZMTPReader()
        XCTAssertEqual(try read(stream.map { [$0] }, into: &bytewise), expected)
        var chunked = ZMTPReader()
        let chunks = stride(from: 0, to: stream.count, by: 7).map { Array(stream[$0..<min($0 + 7, stream.count)]) }
        XCTAssertEqual(try read(chunks, into: &chunked), expected)
    }

    func testAFrameLongerThan255BytesHasAnEightByteSize() {
        let bytes = message([UInt8](repeating: 9, count: 256))
        XCTAssertEqual(Array(bytes.prefix(9)), [0x02, 0, 0, 0, 0, 0, 0, 1, 0])
        XCTAssertEqual(Array(message([7]).prefix(2)), [0x00, 1])
    }

    func testAPongEchoesThePingsContext() throws {
        var reader = ZMTPReader()
        let pong = ZMTPFraming.pong(context: [5, 6])
        XCTAssertEqual(try read([ZMTPFraming.greeting, pong], into: &reader), [.command("PONG", [5, 6])])
    }

    func testAnotherProtocolOrAMalformedFrameIsRefused() {
        var notZMTP = ZMTPReader()
        XCTAssertThrowsError(
            try read([Array("GET / HTTP/1.1\r\n".utf8) + [UInt8](repeating: 0, count: 64)], into: &notZMTP)
        ) {
            XCTAssertEqual($0 as? ZMTPReader.Failure, .badGreeting)
        }
        var curve = ZMTPFraming.greeting
        curve.replaceSubrange(12..<17, with: Array("CURVE".utf8))
        var secured = ZMTPReader()
        XCTAssertThrowsError(try read([curve], into: &secured)) {
            XCTAssertEqual($0 as? ZMTPReader.Failure, .badGreeting)
        }
        var badFlags = ZMTPReader()
        XCTAssertThrowsError(try read([ZMTPFraming.greeting, [0x80, 0]], into: &badFlags)) {
            XCTAssertEqual($0 as? ZMTPReader.Failure, .badFrame)
        }
        var tooLong = ZMTPReader(maxFrameBytes: 100)
        XCTAssertThrowsError(
            try read([ZMTPFraming.greeting, message([UInt8](repeating: 1, count: 300))], into: &tooLong)
        ) {
            XCTAssertEqual($0 as? ZMTPReader.Failure, .badFrame)
        }
        var emptyCommand = ZMTPReader()
        XCTAssertThrowsError(try read([ZMTPFraming.greeting, [0x04, 0]], into: &emptyCommand)) {
            XCTAssertEqual($0 as? ZMTPReader.Failure, .badFrame)
        }
    }
}
