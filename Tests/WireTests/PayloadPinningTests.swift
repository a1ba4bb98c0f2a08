import Foundation
import Wire
import XCTest

/// Every `bytes` field an envelope can hold travels through the real codec with its own contents: a
/// pinned payload (``Wire/WireCodec`` points the C tree at the Swift array instead of copying it) that
/// were paired with another field's buffer would show here as swapped or foreign bytes.
///
/// Nothing is listed by hand: the `bytes` fields are those proto/ declares, reached from `Envelope`
/// (``ProtoSchema``), and the messages are the golden ones, whose bytes fields the test rewrites on the
/// wire, each to distinct contents of one length, before decoding and encoding again. Every element of a
/// repeated message field is sent twice, so that a list (a batch of assignments, an assignment's inputs)
/// holds several payloads whose order matters.
final class PayloadPinningTests: XCTestCase {
    func testEveryBytesFieldRoundTripsWithItsOwnContents() throws {
        let schema = try Self.schema()
        let reachable = Self.bytesFields(from: "Envelope", schema: schema)
        XCTAssertFalse(reachable.isEmpty, "proto/ declares no bytes field reachable from Envelope")
        var covered: Set<String> = []
        for (name, message) in GoldenMessages.envelopes.sorted(by: { $0.key < $1.key }) {
            var assigned: [WireField] = []
            let rewritten = try Self.walk(
                WireCodec.encode(message), message: "Envelope", schema: schema, doublingLists: true
            ) { path, _ in
                let contents = Self.distinctContents(assigned.count)
                assigned.append(WireField(path: path, contents: contents))
                return contents
            }
            guard !assigned.isEmpty else { continue }
            let decoded = try WireCodec.decode(rewritten)
            var sent: [WireField] = []
            _ = try Self.walk(WireCodec.encode(decoded), message: "Envelope", schema: schema) { path, contents in
                sent.append(WireField(path: path, contents: contents))
                return contents
            }
            XCTAssertEqual(sent, assigned, "\(name): the bytes fields did not come back each with its own contents")
            covered.formUnion(assigned.map(\.path))
        }
        XCTAssertEqual(
            reachable.subtracting(covered).sorted(), [],
            "no golden envelope sets these bytes fields: set them in Tests/WireGolden and GoldenMessages.swift")
    }

    /// More payloads than are pinned (``PinnedPayloads/maxPinned``): the rest are copied, in order too.
    func testPayloadsBeyondThePinnedOnesKeepTheirContents() throws {
        let inputs = (0..<40).map { InjectedInput(fromTaskID: "t\($0)", data: Self.distinctContents($0)) }
        let message = Message.taskAssignment(
            TaskAssignment(taskID: "t", batchID: "b", attempt: 1, kind: .tiltShift, inputs: inputs))
        guard case .taskAssignment(let decoded) = try WireCodec.decode(WireCodec.encode(message)) else {
            return XCTFail("not a task assignment")
        }
        XCTAssertEqual(decoded.inputs.map(\.data), inputs.map(\.data))
    }

    struct WireField: Equatable, CustomStringConvertible {
        let path: String
        let contents: [UInt8]
        var description: String { "\(path) \(contents)" }
    }

    /// Different for every index (below 65 536) in contents, all of one length: a payload paired with another
    /// field's buffer of the same length would show as foreign bytes, not only as a length that differs.
    static func distinctContents(_ index: Int) -> [UInt8] {
        [0xB5, UInt8(truncatingIfNeeded: index), UInt8(truncatingIfNeeded: index >> 8), 0x5B, 1, 2, 3, 4]
    }

    // MARK: The schema

    static func schema() throws -> ProtoSchema {
        let directory = RepositoryRoot.url.appendingPathComponent("proto/shiftwork/v1")
        return try ProtoSchema(
            files: ["shiftwork.proto"].map {
                try String(contentsOf: directory.appendingPathComponent($0), encoding: .utf8)
            })
    }

    /// The message type a field holds, or `nil` for a scalar, string, bytes or enum field.
    static func messageType(of field: ProtoSchema.Field, schema: ProtoSchema) -> String? {
        let name =
            field.type.hasPrefix("shiftwork.v1.") ? String(field.type.dropFirst("shiftwork.v1.".count)) : field.type
        return schema.messages.contains(name) ? name : nil
    }

    /// The `bytes` fields (`Message.field`) of `root` and of the messages it holds, transitively.
    static func bytesFields(from root: String, schema: ProtoSchema) -> Set<String> {
        var found: Set<String> = []
        var visited: Set<String> = []
        var pending = [root]
        while let message = pending.popLast() {
            guard visited.insert(message).inserted else { continue }
            for field in schema.fields(of: message) {
                if field.type == "bytes" { found.insert("\(message).\(field.name)") }
                if let type = messageType(of: field, schema: schema) { pending.append(type) }
            }
        }
        return found
    }

    // MARK: The wire format

    struct WireFormatError: Error, CustomStringConvertible {
        let description: String
    }

    /// Copies the protobuf `bytes` of a `message`, replacing the contents of every `bytes` field (nested
    /// messages too, in wire order) by what `replace` returns for its path and contents; with `doublingLists`,
    /// every element of a repeated message field is written twice (each copy walked on its own).
    static func walk(
        _ bytes: [UInt8], message: String, schema: ProtoSchema, doublingLists: Bool = false,
        replace: (String, [UInt8]) throws -> [UInt8]
    ) throws -> [UInt8] {
        let fields = Dictionary(
            schema.fields(of: message).map { ($0.number, $0) }, uniquingKeysWith: { first, _ in first })
        var reader = Reader(bytes: bytes)
        var output: [UInt8] = []
        while !reader.atEnd {
            let tag = try reader.varint()
            let number = Int(tag >> 3)
            switch tag & 7 {
            case 0: output += varint(tag) + varint(try reader.varint())
            case 1: output += varint(tag) + (try reader.take(8))
            case 5: output += varint(tag) + (try reader.take(4))
            case 2:
                let length = try reader.varint()
                guard length <= UInt64(bytes.count) else {
                    throw WireFormatError(description: "\(message): length \(length) too large")
                }
                let contents = try reader.take(Int(length))
                var copies = [contents]
                if let field = fields[number] {
                    if field.type == "bytes" {
                        copies = [try replace("\(message).\(field.name)", contents)]
                    } else if let type = messageType(of: field, schema: schema) {
                        copies = try (0..<(doublingLists && field.repeated ? 2 : 1)).map { _ in
                            try walk(
                                contents, message: type, schema: schema, doublingLists: doublingLists, replace: replace)
                        }
                    }
                }
                for copy in copies { output += varint(tag) + varint(UInt64(copy.count)) + copy }
            default:
                throw WireFormatError(
                    description: "\(message): wire type \(tag & 7) of field \(number) is not expected")
            }
        }
        return output
    }

    static func varint(_ value: UInt64) -> [UInt8] {
        var value = value
        var bytes: [UInt8] = []
        while value >= 0x80 {
            bytes.append(UInt8(value & 0x7F) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
        return bytes
    }

    struct Reader {
        let bytes: [UInt8]
        var index = 0
        var atEnd: Bool { index >= bytes.count }

        mutating func varint() throws -> UInt64 {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while true {
                guard index < bytes.count, shift < 64 else {
                    throw WireFormatError(description: "a varint runs past the end")
                }
                let byte = bytes[index]
                index += 1
                value |= UInt64(byte & 0x7F) << shift
                if byte < 0x80 { return value }
                shift += 7
            }
        }

        mutating func take(_ count: Int) throws -> [UInt8] {
            guard count <= bytes.count - index else { throw WireFormatError(description: "a field runs past the end") }
            defer { index += count }
            return Array(bytes[index..<index + count])
        }
    }
}
