/// A JSON value, written out byte for byte as Foundation's `JSONSerialization` writes it with `.sortedKeys`,
/// pretty-printed (`.prettyPrinted`: two-space indents, `" : "` between key and value) or compact (no
/// whitespace): keys sorted as `String` compares them, `/` escaped as `\/`, control characters as `\u00xx` or
/// their short escapes, other text as UTF-8, whole numbers without a fraction.
///
/// The one JSON writer of the cluster's output (`submit --json`'s summary, `status --json`, the dashboard's
/// API and events), instead of `JSONSerialization` over `[String: Any]`: that casts every value dynamically,
/// and its protocol-conformance look-ups cost `submit --json` about 2 ms of CPU at the batch's end, after its
/// last result (docs/benchmarks.md, "`submit`'s own cost at the batch's ends"). Only what the cluster writes:
/// strings, integers, finite numbers, booleans, arrays and objects.
package enum JSONValue: Sendable, Equatable {
    case string(String)
    case integer(Int)
    /// An unsigned count (task totals, Unix milliseconds), written exactly.
    case unsigned(UInt64)
    /// A finite number (`JSONSerialization` refuses infinities and NaN; this writes them as 0).
    case number(Double)
    case bool(Bool)
    case array([JSONValue])
    /// Members in any order: they are written sorted by key.
    case object([(key: String, value: JSONValue)])

    package static func == (lhs: JSONValue, rhs: JSONValue) -> Bool { lhs.compactText == rhs.compactText }

    /// The value as pretty-printed JSON text, without a final newline.
    package var text: String { written(pretty: true) }

    /// The value as JSON text on one line, without whitespace.
    package var compactText: String { written(pretty: false) }

    /// An object with `key` set to `value` (replacing a member of that key).
    package func setting(_ key: String, _ value: JSONValue) -> JSONValue {
        guard case .object(var members) = self else { return self }
        members.removeAll { $0.key == key }
        members.append((key, value))
        return .object(members)
    }

    private func written(pretty: Bool) -> String {
        var output: [UInt8] = []
        output.reserveCapacity(1_024)
        write(into: &output, indent: pretty ? 0 : nil)
        return String(decoding: output, as: UTF8.self)
    }

    /// Writes the value; `indent` is the current indentation when pretty-printing, `nil` when compact.
    private func write(into output: inout [UInt8], indent: Int?) {
        switch self {
        case .string(let text):
            Self.write(string: text, into: &output)
        case .integer(let value):
            output.append(contentsOf: String(value).utf8)
        case .unsigned(let value):
            output.append(contentsOf: String(value).utf8)
        case .number(let value):
            output.append(contentsOf: Self.text(of: value).utf8)
        case .bool(let value):
            output.append(contentsOf: (value ? "true" : "false").utf8)
        case .array(let elements):
            Self.writeContainer(elements, open: "[", close: "]", into: &output, indent: indent) {
                element, output, inner in
                element.write(into: &output, indent: inner)
            }
        case .object(let members):
            let sorted = members.sorted { $0.key < $1.key }
            Self.writeContainer(sorted, open: "{", close: "}", into: &output, indent: indent) { member, output, inner in
                Self.write(string: member.key, into: &output)
                output.append(contentsOf: (inner == nil ? ":" : " : ").utf8)
                member.value.write(into: &output, indent: inner)
            }
        }
    }

    /// An array's or object's brackets around its elements: one per line, indented, when pretty-printing
    /// (an empty one too, as `JSONSerialization` writes it), comma-separated on one line when compact.
    private static func writeContainer<Element>(
        _ elements: [Element], open: Unicode.Scalar, close: Unicode.Scalar, into output: inout [UInt8], indent: Int?,
        _ writeElement: (Element, inout [UInt8], Int?) -> Void
    ) {
        output.append(UInt8(ascii: open))
        let inner = indent.map { $0 + 2 }
        if indent != nil { output.append(UInt8(ascii: "\n")) }
        for (position, element) in elements.enumerated() {
            if position > 0 { output.append(contentsOf: (indent == nil ? "," : ",\n").utf8) }
            if let inner { pad(&output, inner) }
            writeElement(element, &output, inner)
        }
        if let indent {
            output.append(UInt8(ascii: "\n"))
            pad(&output, indent)
        }
        output.append(UInt8(ascii: close))
    }

    /// As `JSONSerialization` writes a `Double`: its shortest description, `.0` dropped.
    static func text(of value: Double) -> String {
        guard value.isFinite else { return "0" }
        let text = value.description
        return text.hasSuffix(".0") ? String(text.dropLast(2)) : text
    }

    private static func pad(_ output: inout [UInt8], _ count: Int) {
        output.append(contentsOf: repeatElement(UInt8(ascii: " "), count: count))
    }

    private static func write(string: String, into output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "\""): output.append(contentsOf: "\\\"".utf8)
            case UInt8(ascii: "\\"): output.append(contentsOf: "\\\\".utf8)
            case UInt8(ascii: "/"): output.append(contentsOf: "\\/".utf8)
            case 0x08: output.append(contentsOf: "\\b".utf8)
            case 0x0C: output.append(contentsOf: "\\f".utf8)
            case 0x0A: output.append(contentsOf: "\\n".utf8)
            case 0x0D: output.append(contentsOf: "\\r".utf8)
            case 0x09: output.append(contentsOf: "\\t".utf8)
            case 0..<0x20:
                let digits: [UInt8] = Array("0123456789abcdef".utf8)
                output.append(contentsOf: "\\u00".utf8)
                output.append(digits[Int(byte >> 4)])
                output.append(digits[Int(byte & 0x0F)])
            default: output.append(byte)
            }
        }
        output.append(UInt8(ascii: "\""))
    }
}
