/// A JSON value written out byte for byte as Foundation's `JSONSerialization` writes it with
/// `[.prettyPrinted, .sortedKeys]` on Linux (two-space indents, `" : "` between key and value, keys sorted
/// as `String` compares them, `/` escaped as `\/`, control characters as `\u00xx` or their short escapes, other
/// text as UTF-8, whole numbers without a fraction), but without `[String: Any]`: `JSONSerialization`
/// casts every value dynamically, and its protocol-conformance look-ups cost `submit --json` about 2 ms of
/// CPU at the batch's end, after its last result. Only what a summary needs: strings, integers, finite
/// numbers, booleans, arrays and objects.
package enum PrettyJSON: Sendable, Equatable {
    case string(String)
    case integer(Int)
    /// A finite number (`JSONSerialization` refuses infinities and NaN; this writes them as 0).
    case number(Double)
    case bool(Bool)
    case array([PrettyJSON])
    /// Members in any order: they are written sorted by key.
    case object([(key: String, value: PrettyJSON)])

    package static func == (lhs: PrettyJSON, rhs: PrettyJSON) -> Bool { lhs.text == rhs.text }

    /// The value as pretty-printed JSON text, without a final newline.
    package var text: String {
        var output: [UInt8] = []
        output.reserveCapacity(1_024)
        write(into: &output, indent: 0)
        return String(decoding: output, as: UTF8.self)
    }

    private func write(into output: inout [UInt8], indent: Int) {
        switch self {
        case .string(let text):
            Self.write(string: text, into: &output)
        case .integer(let value):
            output.append(contentsOf: String(value).utf8)
        case .number(let value):
            output.append(contentsOf: Self.text(of: value).utf8)
        case .bool(let value):
            output.append(contentsOf: (value ? "true" : "false").utf8)
        case .array(let elements):
            output.append(UInt8(ascii: "["))
            output.append(UInt8(ascii: "\n"))
            for (position, element) in elements.enumerated() {
                if position > 0 { output.append(contentsOf: ",\n".utf8) }
                Self.pad(&output, indent + 2)
                element.write(into: &output, indent: indent + 2)
            }
            output.append(UInt8(ascii: "\n"))
            Self.pad(&output, indent)
            output.append(UInt8(ascii: "]"))
        case .object(let members):
            output.append(UInt8(ascii: "{"))
            output.append(UInt8(ascii: "\n"))
            let sorted = members.sorted { $0.key < $1.key }
            for (position, member) in sorted.enumerated() {
                if position > 0 { output.append(contentsOf: ",\n".utf8) }
                Self.pad(&output, indent + 2)
                Self.write(string: member.key, into: &output)
                output.append(contentsOf: " : ".utf8)
                member.value.write(into: &output, indent: indent + 2)
            }
            output.append(UInt8(ascii: "\n"))
            Self.pad(&output, indent)
            output.append(UInt8(ascii: "}"))
        }
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
