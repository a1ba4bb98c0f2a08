/// Makes text that came from the network (a redirect's `Location`, libcurl's message about a peer)
/// safe to put in an error message that reaches logs and terminals.
enum DisplayText {
    /// `text` with control and non-ASCII characters escaped (`\u{1B}`), cut to `limit` characters.
    static func escaped(_ text: String, limit: Int = 300) -> String {
        var result = ""
        for scalar in text.unicodeScalars {
            if result.count >= limit {
                result += "…"
                break
            }
            if scalar.value >= 0x20 && scalar.value < 0x7F {
                result.unicodeScalars.append(scalar)
            } else {
                result += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            }
        }
        return result
    }
}
