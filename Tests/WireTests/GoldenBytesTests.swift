import Foundation
import Wire
import XCTest

/// The bytes of every message type, as Google's protobuf encodes them (protoc, from the `.txtpb` files in
/// Tests/WireGolden; scripts/generate-wire-golden), are what `WireCodec` and `JournalCodec` read into the
/// values `GoldenMessages` expects, and what they write from those values, byte for byte. The round-trip
/// tests send values through the same codec both ways; these hold it to a foreign encoder, so that a
/// refactor of Sources/Wire that changes the wire (a field number, a wire type, packing, zigzag, a oneof's
/// presence) fails here.
final class GoldenBytesTests: XCTestCase {
    private static let directory = RepositoryRoot.url.appendingPathComponent("Tests/WireGolden")

    /// The names (without extension) of the `.bin` files in `kind`, sorted.
    private static func names(_ kind: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent(kind).path)
            .filter { $0.hasSuffix(".bin") }.map { String($0.dropLast(4)) }.sorted()
    }

    private static func bytes(_ kind: String, _ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: directory.appendingPathComponent("\(kind)/\(name).bin")))
    }

    func testEveryGoldenEnvelopeDecodesToItsValueAndEncodesBackToTheSameBytes() throws {
        let names = try Self.names("envelope")
        XCTAssertEqual(
            Set(names), Set(GoldenMessages.envelopes.keys),
            "every .bin in Tests/WireGolden/envelope has its value in GoldenMessages.envelopes, and no more")
        for name in names {
            let golden = try Self.bytes("envelope", name)
            let expected = try XCTUnwrap(GoldenMessages.envelopes[name])
            let witnessed = GoldenMessages.witnessed[name]
            do {
                var decodedWitness: WirePairPosition?
                let decoded = try WireCodec.decode(golden, witnessed: &decodedWitness)
                XCTAssertEqual(decoded, expected, "\(name): decoded")
                XCTAssertEqual(decodedWitness, witnessed, "\(name): the envelope's witnessed position")
            } catch {
                XCTFail("\(name): protoc's bytes do not decode: \(error)")
            }
            if !GoldenMessages.decodeOnly.contains(name) {
                XCTAssertEqual(
                    Self.hex(WireCodec.encode(expected, witnessed: witnessed)), Self.hex(golden),
                    "\(name): WireCodec's bytes differ from protoc's (a wire change? see scripts/generate-wire-golden)")
            }
        }
    }

    func testEveryGoldenJournalRecordDecodesToItsValueAndEncodesBackToTheSameBytes() throws {
        let names = try Self.names("journal")
        XCTAssertEqual(
            Set(names), Set(GoldenMessages.journal.keys),
            "every .bin in Tests/WireGolden/journal has its value in GoldenMessages.journal, and no more")
        for name in names {
            let golden = try Self.bytes("journal", name)
            let expected = try XCTUnwrap(GoldenMessages.journal[name])
            do {
                let decoded = try JournalCodec.decode(golden)
                XCTAssertEqual(decoded, expected, "\(name): decoded")
            } catch {
                XCTFail("\(name): protoc's bytes do not decode: \(error)")
            }
            XCTAssertEqual(
                Self.hex(JournalCodec.encode(expected)), Self.hex(golden),
                "\(name): JournalCodec's bytes differ from protoc's")
        }
    }

    /// Every body of the envelope and every record of the journal has a golden file, and every field of every
    /// message and every value of every enum is set (not at its default) in at least one: a field added to
    /// proto/ needs a golden value too.
    func testTheGoldenFilesSetEveryBodyEveryFieldAndEveryEnumValueTheyCan() throws {
        let schema = try Self.schema()
        var set: Set<String> = []  // "Message.field"
        var values: Set<String> = []
        for (kind, root) in [("envelope", "Envelope"), ("journal", "JournalRecord")] {
            for name in try Self.names(kind) {
                let text = try String(
                    contentsOf: Self.directory.appendingPathComponent("\(kind)/\(name).txtpb"), encoding: .utf8)
                let (fields, enumValues) = try Self.fieldsSet(in: text, root: root, schema: schema)
                set.formUnion(fields)
                values.formUnion(enumValues)
            }
        }
        for field in schema.fields where !set.contains("\(field.message).\(field.name)") {
            XCTFail(
                "no golden file in Tests/WireGolden sets \(field.message).\(field.name) (\(field.number)): "
                    + "set it in a .txtpb (and GoldenMessages), then run scripts/generate-wire-golden")
        }
        // Every enum value but the zero default, which proto3 never writes.
        for value in schema.values where value.number != 0 && !values.contains(value.name) {
            // RefusalCode and FailureCode values are many: one golden each would be noise; RoundTripTests
            // sends each through the codec, and the numbers are held to the proto by ProtocolDocumentationTests.
            if value.enumeration == "RefusalCode" || value.enumeration == "FailureCode" { continue }
            XCTFail("no golden file sets \(value.enumeration).\(value.name)")
        }
    }

    func testTheCommittedGoldenBytesAreWhatProtocMakesOfTheTextFiles() throws {
        guard Self.findInPath("protoc") != nil else {
            return XCTFail("protoc not found in PATH: run scripts/setup-python (it installs protobuf-compiler)")
        }
        let output = FileManager.default.temporaryDirectory.appendingPathComponent(
            "shiftwork-golden-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: output) }
        let process = Process()
        process.executableURL = RepositoryRoot.url.appendingPathComponent("scripts/generate-wire-golden")
        process.arguments = [output.path]
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        let errorText = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, "scripts/generate-wire-golden failed: \(errorText)")
        for kind in ["envelope", "journal"] {
            for name in try Self.names(kind) {
                let fresh = try? Data(contentsOf: output.appendingPathComponent("\(kind)/\(name).bin"))
                XCTAssertEqual(
                    fresh.map { [UInt8]($0) }, try Self.bytes(kind, name),
                    "Tests/WireGolden/\(kind)/\(name).bin is not what protoc makes of its .txtpb: run scripts/generate-wire-golden"
                )
            }
            let texts = try FileManager.default.contentsOfDirectory(
                atPath: Self.directory.appendingPathComponent(kind).path
            )
            .filter { $0.hasSuffix(".txtpb") }.map { String($0.dropLast(6)) }
            XCTAssertEqual(
                Set(texts), Set(try Self.names(kind)), "\(kind): every .txtpb has its .bin and every .bin its .txtpb")
        }
    }

    // MARK: Reading the text format

    private static func schema() throws -> ProtoSchema {
        let directory = RepositoryRoot.url.appendingPathComponent("proto/shiftwork/v1")
        return try ProtoSchema(
            files: ["shiftwork.proto", "journal.proto"].map {
                try String(contentsOf: directory.appendingPathComponent($0), encoding: .utf8)
            })
    }

    /// The fields (`Message.field`) and enum value names that a text-format message of type `root` sets,
    /// nested messages included; a name its message does not have is an error.
    static func fieldsSet(in text: String, root: String, schema: ProtoSchema) throws -> (Set<String>, Set<String>) {
        let tokens = try ProtoSchema.tokens(
            of: text.split(separator: "\n").map { line in
                line.hasPrefix("#") ? "" : String(line)
            }.joined(separator: "\n"))
        var fields: Set<String> = []
        var values: Set<String> = []
        var stack = [root]
        var index = 0
        while index < tokens.count {
            let token = tokens[index]
            index += 1
            if token == .symbol("}") {
                stack.removeLast()
                continue
            }
            guard case .identifier(let name) = token, let message = stack.last else { continue }
            guard let field = schema.fields(of: message).first(where: { $0.name == name }) else {
                // An enum value (`code: FAILURE_CODE_SINK`) in value position.
                if index >= 2, tokens[index - 2] == .symbol(":") {
                    values.insert(name)
                    continue
                }
                throw ProtoSchema.ParseError(description: "\(message) has no field \(name)")
            }
            fields.insert("\(message).\(name)")
            if index < tokens.count, tokens[index] == .symbol("{") {
                stack.append(String(field.type.split(separator: ".").last ?? Substring(field.type)))
                index += 1
            } else if index + 1 < tokens.count, tokens[index] == .symbol(":"), tokens[index + 1] == .symbol("{") {
                stack.append(String(field.type.split(separator: ".").last ?? Substring(field.type)))
                index += 2
            }
        }
        return (fields, values)
    }

    private static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String(format: "%02x", $0) }.joined(separator: " ")
    }

    private static func findInPath(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(name)" }.first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
    }
}
