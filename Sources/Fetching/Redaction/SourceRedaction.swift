import Foundation

/// Masks the credentials a source URL may carry, for every place that shows a source: log lines, `status`,
/// the dashboard, the journal's display, a client's output, error messages. Only the request itself uses the
/// URL as given.
///
/// Masked: the password of the userinfo (`http://alice:***@host/`; the user name stays, it tells the owner
/// which account), and the values of the query parameters that sign or authorise a presigned URL: S3's
/// `X-Amz-Signature`, `X-Amz-Credential`, `X-Amz-Security-Token`; GCS's `X-Goog-Signature`,
/// `X-Goog-Credential`; Azure SAS's `sig`; and `token`, `access_token` (names compared without case). The
/// rest stays as it was, so the owner still recognises the source.
///
/// ```swift
/// SourceRedaction.redact("https://alice:hunter2@host/x.jpg?X-Amz-Signature=abc&w=1")
/// // "https://alice:***@host/x.jpg?X-Amz-Signature=***&w=1"
/// ```
public enum SourceRedaction {
    /// What replaces a masked value.
    public static let mask = "***"

    /// Query parameters whose values are credentials (lowercased).
    public static let sensitiveParameters: Set<String> = [
        "x-amz-signature", "x-amz-credential", "x-amz-security-token",
        "x-goog-signature", "x-goog-credential",
        "sig", "token", "access_token",
    ]

    /// `source` with its credentials masked; a source without any (a path, a plain URL) is returned as it is.
    public static func redact(_ source: String) -> String {
        // Without '@' or '?' there is nothing to mask: one pass over the bytes (status shows every item's source).
        guard source.utf8.contains(where: { $0 == UInt8(ascii: "@") || $0 == UInt8(ascii: "?") }) else { return source }
        guard let schemeEnd = source.range(of: "://") else { return source }
        let scheme = source[..<schemeEnd.lowerBound]
        guard !scheme.isEmpty, scheme.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) })
        else {
            return source
        }
        let rest = source[schemeEnd.upperBound...]
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
        var authority = String(rest[..<authorityEnd])
        if let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") {
            authority = String(authority[...colon]) + mask + String(authority[at...])
        }
        var tail = String(rest[authorityEnd...])
        if let question = tail.firstIndex(of: "?") {
            let fragmentStart = tail[question...].firstIndex(of: "#") ?? tail.endIndex
            let query = tail[tail.index(after: question)..<fragmentStart]
            let masked = query.split(separator: "&", omittingEmptySubsequences: false).map { parameter -> String in
                guard let equals = parameter.firstIndex(of: "=") else { return String(parameter) }
                let name = String(parameter[..<equals])
                let decoded = (name.removingPercentEncoding ?? name).lowercased()
                return sensitiveParameters.contains(decoded) ? name + "=" + mask : String(parameter)
            }.joined(separator: "&")
            tail = String(tail[...question]) + masked + String(tail[fragmentStart...])
        }
        return String(scheme) + "://" + authority + tail
    }

    /// `text` (an error message, a log line) with every URL in it masked as ``redact(_:)`` does. A URL runs from
    /// its scheme to the next space, quote, `<`, `>` or the end.
    public static func redactURLs(in text: String) -> String {
        guard text.contains("://") else { return text }
        var result = ""
        var token = ""
        func flush() {
            result += token.contains("://") ? redactToken(token) : token
            token = ""
        }
        for character in text {
            if character.isWhitespace || "\"'<>`".contains(character) {
                flush()
                result.append(character)
            } else {
                token.append(character)
            }
        }
        flush()
        return result
    }

    /// A token with a URL inside, after text such as `(redirected` or `url=`: masks from the scheme on.
    private static func redactToken(_ token: String) -> String {
        guard let separator = token.range(of: "://") else { return token }
        var start = separator.lowerBound
        while start > token.startIndex {
            let before = token.index(before: start)
            let character = token[before]
            guard character.isASCII, character.isLetter || character.isNumber || "+-.".contains(character) else {
                break
            }
            start = before
        }
        // Punctuation that ends a sentence or a parenthesis stays outside the URL (a masked value would swallow it).
        var end = token.endIndex
        while end > separator.upperBound, ".,;:)]!?".contains(token[token.index(before: end)]) {
            end = token.index(before: end)
        }
        return String(token[..<start]) + redact(String(token[start..<end])) + String(token[end...])
    }
}
