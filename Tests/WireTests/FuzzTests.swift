import ShiftworkTestSupport
import Wire
import XCTest

/// Deterministic fuzzing: random bytes and mutations of valid encodings never crash the decoder, and
/// whatever decodes re-encodes to something that decodes the same way.
final class FuzzTests: XCTestCase {
    private static let iterations = 10_000

    func testRandomBytesNeverCrash() {
        var generator = SeededGenerator(seed: 0x5EED_0001)
        var accepted = 0
        for _ in 0..<Self.iterations {
            let count = Int.random(in: 0...256, using: &generator)
            let bytes = generator.bytes(count)
            if checkStable(bytes) { accepted += 1 }
        }
        // Most random inputs are rejected; the point is that none crashes.
        XCTAssertLessThan(accepted, Self.iterations)
    }

    func testMutatedEncodingsNeverCrash() {
        var generator = SeededGenerator(seed: 0x5EED_0002)
        let encodings = SampleMessages.small.map(WireCodec.encode)
        var outcomes: [String: Int] = [:]
        for _ in 0..<Self.iterations {
            let original = encodings[Int.random(in: 0..<encodings.count, using: &generator)]
            let mutated = mutate(original, using: &generator)
            let outcome: String
            do {
                _ = try WireCodec.decode(mutated)
                outcome = "decoded"
            } catch {
                outcome = "\(error)".prefix { $0 != ":" }.description
            }
            outcomes[outcome, default: 0] += 1
            _ = checkStable(mutated)
        }
        // The mutations exercise both paths.
        XCTAssertGreaterThan(outcomes["decoded", default: 0], 0, "\(outcomes)")
        XCTAssertGreaterThan(outcomes.count, 2, "\(outcomes)")
    }

    /// Decodes `bytes`; when that succeeds, the message re-encodes and decodes to the same bytes.
    @discardableResult
    private func checkStable(_ bytes: [UInt8]) -> Bool {
        guard let message = try? WireCodec.decode(bytes) else { return false }
        let encoded = WireCodec.encode(message)
        guard let again = try? WireCodec.decode(encoded) else {
            XCTFail("re-encoding of \(bytes) does not decode")
            return true
        }
        // Compare encodings rather than values: a mutated float may be a NaN.
        XCTAssertEqual(WireCodec.encode(again), encoded)
        return true
    }

    private func mutate(_ bytes: [UInt8], using generator: inout SeededGenerator) -> [UInt8] {
        var bytes = bytes
        let mutations = Int.random(in: 1...4, using: &generator)
        for _ in 0..<mutations {
            let position = bytes.isEmpty ? 0 : Int.random(in: 0..<bytes.count, using: &generator)
            switch Int.random(in: 0..<7, using: &generator) {
            case 0 where !bytes.isEmpty:  // flip a bit
                bytes[position] ^= 1 << UInt8.random(in: 0..<8, using: &generator)
            case 1 where !bytes.isEmpty:  // overwrite a byte
                bytes[position] = UInt8.random(in: 0...255, using: &generator)
            case 2:  // insert a byte
                bytes.insert(UInt8.random(in: 0...255, using: &generator), at: position)
            case 3 where !bytes.isEmpty:  // delete a byte
                bytes.remove(at: position)
            case 4:  // truncate
                bytes = Array(bytes.prefix(position))
            case 5 where !bytes.isEmpty:  // a huge varint, as a length or a value
                bytes.replaceSubrange(position..<position + 1, with: [0xFF, 0xFF, 0xFF, 0xFF, 0x0F])
            case 6:  // duplicate a slice (repeated fields, repeated oneof members)
                let end = min(bytes.count, position + Int.random(in: 1...16, using: &generator))
                bytes.insert(contentsOf: bytes[position..<end], at: end)
            default:
                break
            }
        }
        return bytes
    }
}
