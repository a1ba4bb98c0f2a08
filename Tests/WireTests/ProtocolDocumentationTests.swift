import Foundation
import Wire
import XCTest

/// docs/protocol.md stays true to the schema in proto/ and to the code: every message, field and enum value
/// is documented, the field numbers it gives are the schema's, its code tables list every code, and the
/// version it calls current is the one `WireProtocol` sends.
final class ProtocolDocumentationTests: XCTestCase {
    private static func schema() throws -> ProtoSchema {
        let directory = RepositoryRoot.url.appendingPathComponent("proto")
        let files = try XCTUnwrap(FileManager.default.enumerator(atPath: directory.path))
            .compactMap { $0 as? String }.filter { $0.hasSuffix(".proto") }.sorted()
        XCTAssertFalse(files.isEmpty, "no .proto files under \(directory.path)")
        return try ProtoSchema(
            files: files.map {
                try String(contentsOf: directory.appendingPathComponent($0), encoding: .utf8)
            })
    }

    private static func document() throws -> String {
        try String(contentsOf: RepositoryRoot.url.appendingPathComponent("docs/protocol.md"), encoding: .utf8)
    }

    func testEveryMessageFieldAndEnumValueOfTheProtoFilesIsInTheProtocolDocument() throws {
        let schema = try Self.schema()
        XCTAssertTrue(
            schema.messages.contains("Envelope") && schema.enumerations.contains("RefusalCode")
                && schema.fields(of: "JournalRecord").count >= 8,
            "the parser missed declarations: \(schema.messages) \(schema.enumerations)")
        let document = try Self.document()
        let words = Self.identifiers(in: document)
        let code = Self.identifiers(in: Self.codeSpans(in: document).joined(separator: " "))
        let places = Self.places(in: document)
        for message in schema.messages where !words.contains(Self.shortName(message)) {
            XCTFail("message \(message) is not described in docs/protocol.md: add it where its direction belongs")
        }
        for enumeration in schema.enumerations where !words.contains(Self.shortName(enumeration)) {
            XCTFail("enum \(enumeration) is not described in docs/protocol.md")
        }
        // A field is documented where its message is: written as code (`Message.name`, `Message{name, …}`), or
        // as code in a section whose heading names the message, or in a table that names it (in the table or
        // just above it). A word of the prose (`source`, `state`) elsewhere does not count.
        for field in schema.fields {
            let message = Self.shortName(field.message)
            let documented =
                places.contains { place in
                    place.names.contains(message) && place.code.contains(field.name)
                }
                || Self.codeSpans(in: document).contains { span in
                    span.contains("\(message).\(field.name)")
                        || span.range(of: "\(message){").map {
                            Self.identifiers(in: String(span[$0.upperBound...])).contains(field.name)
                        } == true
                }
            if !documented {
                XCTFail(
                    "field \(field.message).\(field.name) (\(field.number)) is not in docs/protocol.md: add it, in `backticks`, "
                        + "to its message's table (or its section)")
            }
        }
        for value in schema.values where !code.contains(value.name) {
            XCTFail("\(value.enumeration) value \(value.name) (\(value.number)) is not in docs/protocol.md")
        }
    }

    func testTheBodyTablesListEveryBodyWithItsFieldNumber() throws {
        let schema = try Self.schema()
        let rows = try Self.document().split(separator: "\n").filter { $0.hasPrefix("| ") }
        for (message, oneof) in [("Envelope", "body"), ("JournalRecord", "record")] {
            for body in schema.fields(of: message) where body.oneof == oneof {
                let row = "| \(body.number) | `\(body.name)` | `\(Self.shortName(body.type))` |"
                XCTAssertTrue(
                    rows.contains { $0.hasPrefix(row) },
                    "docs/protocol.md's table of \(message) bodies has no row \(row) (\(body.name))")
            }
        }
    }

    func testTheFieldNumbersTheDocumentGivesAreTheSchemas() throws {
        let schema = try Self.schema()
        let document = try Self.document()
        var numbers: [String: Set<Int>] = [:]
        for field in schema.fields { numbers[field.name, default: []].insert(field.number) }
        for value in schema.values { numbers[value.name, default: []].insert(value.number) }
        var checked = 0
        // "`accepts_chained_tasks` (300)", "`IMAGE_FORMAT_WEBP` (140)": a snake_case name and its number.
        for match in document.matches(of: /`([A-Za-z0-9_]+_[A-Za-z0-9_]+|[a-z]+)` \((\d+)\)/) {
            let name = String(match.1)
            guard let known = numbers[name], let number = Int(match.2) else { continue }
            checked += 1
            XCTAssertTrue(
                known.contains(number),
                "docs/protocol.md gives `\(name)` the number \(number); the schema has \(known.sorted())")
        }
        XCTAssertGreaterThan(checked, 10, "the document gives field numbers as `name` (N); the pattern found too few")
    }

    func testTheCodeTablesListEveryValueOfTheSchemaAndOfTheCode() throws {
        let schema = try Self.schema()
        let document = try Self.document()
        let rows = document.split(separator: "\n").filter { $0.hasPrefix("| `") }
        let swiftNumbers: [String: [UInt32]] = [
            "RefusalCode": RefusalCode.allCases.map(\.rawValue),
            "FailureCode": FailureCode.allCases.map(\.rawValue),
            "TaskKind": TaskKind.allCases.map(\.rawValue),
            "ImageFormat": WireImageFormat.allCases.map(\.rawValue),
        ]
        for (enumeration, swift) in swiftNumbers {
            let values = schema.values(of: enumeration)
            XCTAssertEqual(
                values.map { UInt32($0.number) }.sorted(), swift.sorted(),
                "\(enumeration): the proto's values and the Swift enum's cases differ")
        }
        for enumeration in ["RefusalCode", "FailureCode"] {
            for value in schema.values(of: enumeration) {
                let row = rows.first { $0.hasPrefix("| `\(value.name)`") }
                XCTAssertNotNil(row, "docs/protocol.md's \(enumeration) table has no row for \(value.name)")
                if let row {
                    XCTAssertTrue(
                        row.hasPrefix("| `\(value.name)` (\(value.number))"),
                        "the \(enumeration) row of \(value.name) does not start with its number (\(value.number)): \(row)"
                    )
                }
            }
        }
        // No name of a value that is not (or no longer) in the schema.
        let known = Set(schema.values.map(\.name))
        for match in document.matches(of: /\b((?:REFUSAL_CODE|FAILURE_CODE|TASK_KIND|IMAGE_FORMAT)_[A-Z0-9_]+)\b/) {
            XCTAssertTrue(
                known.contains(String(match.1)), "docs/protocol.md names \(match.1), which proto/ does not declare")
        }
    }

    func testTheVersionTheDocumentCallsCurrentIsTheCodes() throws {
        let document = try Self.document()
        let statements = document.matches(of: /`major = (\d+), minor = (\d+)`/)
        XCTAssertEqual(
            statements.count, 1, "docs/protocol.md states the current version (`major = M, minor = N`) exactly once")
        let stated = try XCTUnwrap(statements.first)
        XCTAssertEqual(UInt32(stated.1), WireProtocol.major, "the major version docs/protocol.md calls current")
        XCTAssertEqual(UInt32(stated.2), WireProtocol.minor, "the minor version docs/protocol.md calls current")
        XCTAssertNil(document.range(of: "(this version)"), "only the one statement says which version is current")
        // The history has an entry for every minor up to the current one and none beyond.
        let minors = Set(document.matches(of: /\*\*Minor (\d+)\*\*/).compactMap { UInt32($0.1) })
        XCTAssertEqual(minors, Set(1...WireProtocol.minor), "docs/protocol.md's **Minor N** entries")
    }

    func testTheSchemaParserReadsNestedDeclarationsOneofsAndSkipsComments() throws {
        let text = """
            syntax = "proto3";
            package a.b;
            import "x/y.proto";
            // message Commented { }
            /* enum Hidden { H = 0; } */
            message Outer {
              message Inner { string message = 1; }  // message AlsoCommented
              enum Kind { KIND_UNSPECIFIED = 0; KIND_X = 0x10; }
              repeated Inner inners = 2 [packed = true];
              oneof choice { uint32 count = 100; a.b.Kind kind = 101; }
              map<string, uint64> sizes = 3;
              reserved 4, 5;
            }
            enum Top { TOP_UNSPECIFIED = 0; TOP_NEGATIVE = -1; }
            """
        let schema = try ProtoSchema(parsing: text)
        XCTAssertEqual(schema.messages, ["Outer", "Outer.Inner"])
        XCTAssertEqual(schema.enumerations, ["Outer.Kind", "Top"])
        XCTAssertEqual(
            schema.fields,
            [
                .init(message: "Outer.Inner", name: "message", number: 1, type: "string", repeated: false, oneof: nil),
                .init(message: "Outer", name: "inners", number: 2, type: "Inner", repeated: true, oneof: nil),
                .init(message: "Outer", name: "count", number: 100, type: "uint32", repeated: false, oneof: "choice"),
                .init(message: "Outer", name: "kind", number: 101, type: "a.b.Kind", repeated: false, oneof: "choice"),
                .init(
                    message: "Outer", name: "sizes", number: 3, type: "map<string, uint64>", repeated: false, oneof: nil
                ),
            ])
        XCTAssertEqual(schema.values.map(\.number), [0, 16, 0, -1])
        XCTAssertThrowsError(try ProtoSchema(parsing: "message M { string = 1; }"))
        XCTAssertThrowsError(try ProtoSchema(parsing: "message M { string s = 1 }"))
    }

    // MARK: Text

    /// A part of the document that documents the messages it names: a section (named in its heading) or a
    /// table (named in it or in the two lines above it), with the identifiers written as code in it.
    private struct Place {
        let names: Set<String>
        let code: Set<String>
    }

    private static func places(in document: String) -> [Place] {
        let lines = document.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        func place(names: String, body: ArraySlice<String>) -> Place {
            Place(
                names: identifiers(in: codeSpans(in: names).joined(separator: " ") + " " + names),
                code: identifiers(in: codeSpans(in: body.joined(separator: "\n")).joined(separator: " ")))
        }
        var places: [Place] = []
        var heading = 0
        for (index, line) in lines.enumerated().dropFirst() where line.hasPrefix("#") {
            places.append(place(names: lines[heading], body: lines[heading..<index]))
            heading = index
        }
        places.append(place(names: lines[heading], body: lines[heading...]))
        var index = 0
        while index < lines.count {
            guard lines[index].hasPrefix("|") else {
                index += 1
                continue
            }
            let start = index
            while index < lines.count, lines[index].hasPrefix("|") { index += 1 }
            let table = lines[start..<index]
            let above = lines[max(0, start - 2)..<start].joined(separator: " ")
            places.append(
                Place(
                    names: identifiers(
                        in: codeSpans(in: above + " " + table.joined(separator: " ")).joined(separator: " ")),
                    code: identifiers(in: codeSpans(in: table.joined(separator: "\n")).joined(separator: " "))))
        }
        return places
    }

    private static func shortName(_ name: String) -> String {
        String(name.split(separator: ".").last ?? Substring(name))
    }

    /// The text between backticks (Markdown code spans and fenced blocks' lines alike).
    private static func codeSpans(in text: String) -> [String] {
        text.split(separator: "`", omittingEmptySubsequences: false).enumerated()
            .filter { $0.offset % 2 == 1 }.map { String($0.element) }
    }

    /// The identifiers in `text` (runs of letters, digits and `_`).
    private static func identifiers(in text: String) -> Set<String> {
        Set(text.split(whereSeparator: { !($0.isLetter || $0.isNumber || $0 == "_") }).map(String.init))
    }
}
