import Foundation

/// The text format of Shiftwork's key files: one Z85 key per line; blank lines and comment lines (`#`
/// followed by a space, or a lone `#`) are ignored. A line may carry a label after the key, separated by
/// white space. (`#` is itself a Z85 character, hence the space after it.)
enum KeyFile {
    /// The lines of `path` that are not blank or comments, with their line numbers.
    static func contentLines(of path: String, what: String) throws -> [(number: Int, text: Substring)] {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw CurveKeyError(
                "cannot read the \(what) file \(path): \((error as NSError).localizedFailureReason ?? error.localizedDescription)"
            )
        }
        let text = String(decoding: data, as: UTF8.self)
        return text.split(separator: "\n", omittingEmptySubsequences: false).enumerated().compactMap { index, raw in
            let line = raw.trimmingCharacters(in: .whitespacesAndNewlines)
            if line.isEmpty || line == "#" || line.hasPrefix("# ") { return nil }
            return (index + 1, Substring(line))
        }
    }

    /// The public keys listed in `path`, one per content line.
    static func keys(in path: String, what: String) throws -> [CurvePublicKey] {
        try contentLines(of: path, what: what).map { number, line in
            let token = String(line.prefix(while: { !$0.isWhitespace }))
            guard Z85Key.isValid(token) else {
                let shown = token.count > 48 ? String(token.prefix(48)) + "…" : token
                throw CurveKeyError(
                    "\(path) line \(number): expected a CurveZMQ public key (40 characters of Z85, as `shiftwork keygen` writes into NAME.pub), found '\(shown)'"
                )
            }
            return CurvePublicKey(validated: token)
        }
    }
}
