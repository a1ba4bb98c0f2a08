/// Makes text that came from the network safe to show on a terminal or write into a log line.
///
/// Worker IDs, item sources, error messages and versions travel from peers that may be hostile. Written
/// raw, a newline forges log lines (`\n2026-11-23T10:00:00 info …`), and escape sequences (`\u{1B}[2J`)
/// clear or recolour an operator's terminal. `escape` writes every control character visibly instead:
/// newline, carriage return and tab as `\n`, `\r`, `\t`; other C0 and C1 controls, DEL and the Unicode
/// bidirectional overrides (which reorder what a reader sees) as `\u{XX}`. Everything else, including
/// non-ASCII letters, passes unchanged. JSON output needs none of this: it keeps the exact value,
/// escaped as JSON.
public enum PrintableText {
    /// `text` with every character that could forge a line or steer a terminal written as an escape.
    public static func escape(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: needsEscape) else { return text }
        var escaped = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n": escaped.append(contentsOf: #"\n"#.unicodeScalars)
            case "\r": escaped.append(contentsOf: #"\r"#.unicodeScalars)
            case "\t": escaped.append(contentsOf: #"\t"#.unicodeScalars)
            case _ where needsEscape(scalar):
                escaped.append(contentsOf: "\\u{\(String(scalar.value, radix: 16, uppercase: true))}".unicodeScalars)
            default:
                escaped.append(scalar)
            }
        }
        return String(escaped)
    }

    /// Whether `scalar` must not reach a terminal or a log line as it is.
    public static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F: true  // C0 controls, DEL, C1 controls (0x9B is a one-byte CSI)
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: true  // bidirectional marks and overrides
        case 0x2028, 0x2029: true  // line and paragraph separators
        default: false
        }
    }
}
