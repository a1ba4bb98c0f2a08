import Foundation

/// Derives safe, distinct output file names from input URLs and paths.
///
/// A name never escapes the output directory: only the last path component of the input is used,
/// stripped of its extension and of every character outside `A–Z a–z 0–9 . _ -`, never starting with a
/// dot. Inputs that map to the same name get `-2`, `-3`, … suffixes.
public struct OutputNaming: Sendable {
    private var used: Set<String> = []

    /// Creates a naming scope; names are distinct within one scope.
    public init() {}

    /// The file stem (no extension) for `source`, distinct from every stem given before.
    public mutating func stem(for source: String) -> String {
        distinct(Self.baseStem(for: source))
    }

    /// A safe stem made of `name` (a name the coordinator echoed, say), distinct from every stem given
    /// before: characters outside `A–Z a–z 0–9 . _ -` become `_`, so it never names another directory.
    public mutating func stem(forName name: String) -> String {
        distinct(Self.sanitized(name))
    }

    private mutating func distinct(_ base: String) -> String {
        var candidate = base
        var counter = 2
        while used.contains(candidate.lowercased()) {
            candidate = "\(base)-\(counter)"
            counter += 1
        }
        used.insert(candidate.lowercased())
        return candidate
    }

    /// The sanitised stem of `source`, before collisions are resolved.
    static func baseStem(for source: String) -> String {
        var component: String
        if let url = URL(string: source), let scheme = url.scheme, ["http", "https", "file"].contains(scheme.lowercased()) {
            component = url.lastPathComponent
            if component == "/" || component.isEmpty { component = url.host ?? "" }
        } else {
            component = (source as NSString).lastPathComponent
        }
        component = component.removingPercentEncoding ?? component
        if let dot = component.lastIndex(of: "."), dot != component.startIndex {
            component = String(component[..<dot])
        }
        return sanitized(component)
    }

    /// `component` with every character outside `A–Z a–z 0–9 . _ -` replaced, no leading dot, at most
    /// 100 characters, and never empty.
    static func sanitized(_ component: String) -> String {
        let allowed = component.unicodeScalars.map { scalar -> Character in
            let value = scalar.value
            let isSafe = (0x30...0x39).contains(value) || (0x41...0x5A).contains(value)
                || (0x61...0x7A).contains(value) || scalar == "_" || scalar == "-" || scalar == "."
            return isSafe ? Character(scalar) : "_"
        }
        var stem = String(allowed)
        while stem.hasPrefix(".") { stem.removeFirst() }
        if stem.count > 100 { stem = String(stem.prefix(100)) }
        if stem.isEmpty || stem.allSatisfy({ $0 == "_" || $0 == "." }) { stem = "image" }
        return stem
    }
}
