import Foundation
import XCTest

/// docs/protocol.md describes every message and enumeration of the schema in proto/.
final class ProtocolDocumentationTests: XCTestCase {
    func testEveryMessageAndEnumOfTheProtoFilesIsInTheProtocolDocument() throws {
        let root = RepositoryRoot.url
        let protoDirectory = root.appendingPathComponent("proto")
        let files = try XCTUnwrap(FileManager.default.enumerator(atPath: protoDirectory.path))
            .compactMap { $0 as? String }.filter { $0.hasSuffix(".proto") }.sorted()
        XCTAssertFalse(files.isEmpty, "no .proto files under \(protoDirectory.path)")
        var names: [(file: String, name: String)] = []
        for file in files {
            let text = try String(contentsOf: protoDirectory.appendingPathComponent(file), encoding: .utf8)
            names += Self.declarations(in: text).map { (file, $0) }
        }
        XCTAssertTrue(names.contains { $0.name == "Envelope" } && names.contains { $0.name == "RefusalCode" },
                      "the parser missed declarations: \(names.map(\.name))")

        let document = try String(contentsOf: root.appendingPathComponent("docs/protocol.md"), encoding: .utf8)
        let documented = Self.words(in: document)
        for (file, name) in names where !documented.contains(name) {
            XCTFail("\(name) (proto/\(file)) is not described in docs/protocol.md: add it where its direction belongs")
        }
    }

    func testTheDeclarationParserFindsNestedAndIndentedDeclarationsAndSkipsComments() {
        let text = """
            // message Commented { }
            message Outer {
              message Inner { string message = 1; }  // message AlsoCommented
              enum Kind { KIND_UNSPECIFIED = 0; }
            }
            enum Top { TOP_UNSPECIFIED = 0; }
            """
        XCTAssertEqual(Self.declarations(in: text), ["Outer", "Inner", "Kind", "Top"])
    }

    /// The names declared with `message NAME` or `enum NAME` in proto source, in order (comments skipped).
    static func declarations(in proto: String) -> [String] {
        var names: [String] = []
        for rawLine in proto.split(separator: "\n", omittingEmptySubsequences: false) {
            let line = rawLine.range(of: "//").map { rawLine[..<$0.lowerBound] } ?? rawLine[...]
            let tokens = line.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "{" })
            // A declaration starts its line; `string message = 2;` declares a field.
            if tokens.count >= 2, tokens[0] == "message" || tokens[0] == "enum" {
                names.append(String(tokens[1]))
            }
        }
        return names
    }

    /// The identifiers in `text` (runs of letters, digits and `_`).
    private static func words(in text: String) -> Set<String> {
        Set(text.split(whereSeparator: { !($0.isLetter || $0.isNumber || $0 == "_") }).map(String.init))
    }
}
