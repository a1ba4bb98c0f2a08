/// Escapes text for HTML, for the pages the server writes itself (401, 403, 404): a batch ID or a reason
/// from the network becomes text, never markup.
enum HTMLText {
    /// `text` with `&`, `<`, `>`, `"` and `'` replaced by character references.
    static func escape(_ text: String) -> String {
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&#39;"
            default: escaped.append(character)
            }
        }
        return escaped
    }
}
