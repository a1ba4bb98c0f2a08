/// The host of an absolute URL, as written (`[::1]` keeps its brackets): what ``SourcePolicy/decision(forHost:)``
/// reads.
enum URLHost {
    /// `http://alice:pw@[::1]:8080/x` → `[::1]`; `http://127.1/x` → `127.1`; `nil` without `://`.
    static func host(of url: String) -> String? {
        guard let separator = url.range(of: "://") else { return nil }
        let rest = url[separator.upperBound...]
        var authority = rest[..<(rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex)]
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            return String(authority[...close])
        }
        return String(authority[..<(authority.firstIndex(of: ":") ?? authority.endIndex)])
    }
}
