import Foundation

/// How a batch's outputs are laid out in the output directory (or a sink).
public enum OutputLayout: Sendable {
    /// A directory input keeps its tree: `~/Pictures/2024/01/IMG_0001.HEIC` → `OUT/2024/01/IMG_0001.jpg`; names
    /// keep their characters (`OutputNaming.treeNames`). The default.
    case tree
    /// Every output at the top of the output directory, its name made of `A–Z a–z 0–9 . _ -` (`--flat`).
    case flat
}

/// Derives safe, distinct output names from input URLs and paths, decided before a batch is submitted, in
/// input order: which input becomes which output never depends on the order they finish in.
///
/// `treeNames` keeps a directory input's folders and the names' characters (see there). The *flat* scope
/// (`stem(for:)`, `--flat`, and what the coordinator names a manifest's images) uses only the last path
/// component of the input, stripped of its extension and of every character outside `A–Z a–z 0–9 . _ -`,
/// never starting with a dot. Inputs that map to the same name get `-2`, `-3`, … suffixes (compared without
/// case, for the file systems that ignore it).
public struct OutputNaming: Sendable {
    private var names = DistinctNames()

    /// Creates a naming scope; names are distinct within one scope.
    public init() {}

    /// The file stem (no extension) for `source`, distinct from every stem given before.
    public mutating func stem(for source: String) -> String {
        names.claim(Self.baseStem(for: source))
    }

    /// A safe stem made of `name` (a name the coordinator echoed, say), distinct from every stem given
    /// before: characters outside `A–Z a–z 0–9 . _ -` become `_`, so it never names another directory.
    public mutating func stem(forName name: String) -> String {
        names.claim(Self.sanitized(name))
    }

    /// The sanitised stem of `source`, before collisions are resolved.
    static func baseStem(for source: String) -> String {
        sanitized(withoutExtension(lastComponent(of: source, decodingLocalPaths: true)))
    }

    /// The last path component of `source` as it is named: a URL's (percent-decoded; its host when its path
    /// is empty), else a path's (percent-decoded too with `decodingLocalPaths`, as the flat names always were).
    static func lastComponent(of source: String, decodingLocalPaths: Bool) -> String {
        if let url = URL(string: source), let scheme = url.scheme,
            ["http", "https", "file"].contains(scheme.lowercased())
        {
            var component = url.lastPathComponent
            if component == "/" || component.isEmpty { component = url.host ?? "" }
            return component.removingPercentEncoding ?? component
        }
        let component = (source as NSString).lastPathComponent
        return decodingLocalPaths ? (component.removingPercentEncoding ?? component) : component
    }

    /// `name` without its extension (a leading dot is no extension's).
    static func withoutExtension(_ name: String) -> String {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return name }
        return String(name[..<dot])
    }

    /// `component` with every character outside `A–Z a–z 0–9 . _ -` replaced, no leading dot, at most
    /// 100 characters, and never empty.
    static func sanitized(_ component: String) -> String {
        let allowed = component.unicodeScalars.map { scalar -> Character in
            let value = scalar.value
            let isSafe =
                (0x30...0x39).contains(value) || (0x41...0x5A).contains(value)
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
