import Foundation

/// A manifest: a text file listing images to process, one URL or path a line, which a batch expands
/// into more items while it runs. Blank lines and lines starting with `#` are ignored.
///
/// To tell a manifest from any other text, every entry must be an `http`, `https` or `file` URL, or a
/// path ending in `.jpg`, `.jpeg`, `.png`, `.webp`, `.avif`, `.heic`, `.heif`, `.tif`, `.tiff`, `.gif`, `.bmp` (an image) or `.txt`, `.list` (another manifest). Relative
/// entries are resolved against the manifest's own URL or directory.
public struct Manifest: Sendable, Equatable {
    /// A manifest may list at most this many entries.
    public static let maxEntries = 100_000

    /// The entries, absolute, in order.
    public let entries: [String]

    /// A manifest of `entries` (already absolute).
    public init(entries: [String]) {
        self.entries = entries
    }

    /// The manifest in `bytes` fetched from `source`, or `nil` when the bytes are not a manifest.
    public init?(parsing bytes: [UInt8], source: String) {
        guard case .success(let manifest) = Self.parse(bytes, source: source) else { return nil }
        self = manifest
    }

    /// Why some bytes are not a manifest, for the person who wrote the list.
    public struct Problem: Error, Sendable, Equatable, CustomStringConvertible {
        /// What is wrong, naming the line when one is at fault.
        public let description: String
    }

    /// The manifest in `bytes` read from `source`, or what keeps them from being one (binary or not UTF-8,
    /// no entry, too many entries, or the first line that is not an image URL or path).
    public static func parse(_ bytes: [UInt8], source: String) -> Result<Manifest, Problem> {
        guard !bytes.contains(0), let text = String(validating: bytes, as: UTF8.self) else {
            return .failure(Problem(description: "it is not text (UTF-8 without NUL bytes)"))
        }
        var entries: [String] = []
        var lineNumber = 0
        for rawLine in text.split(
            omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" || $0 == "\r" })
        {
            lineNumber += 1
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") { continue }
            guard let entry = Self.resolve(line, against: source) else {
                let shown = line.count > 80 ? String(line.prefix(80)) + "…" : line
                return .failure(
                    Problem(
                        description:
                            "line \(lineNumber) (\(shown)) is neither an http, https or file URL nor the path of an image "
                            + "(.jpg .jpeg .png .webp .avif .heic .heif .tif .tiff .gif .bmp) or of another list (.txt .list)"
                    ))
            }
            entries.append(entry)
            if entries.count > Self.maxEntries {
                return .failure(Problem(description: "it lists more than \(Self.maxEntries) entries"))
            }
        }
        guard !entries.isEmpty else {
            return .failure(Problem(description: "it lists no image (only blank lines and # comments)"))
        }
        return .success(Manifest(entries: entries))
    }

    /// The manifest's normalized text: one absolute entry a line.
    public var text: String { entries.joined(separator: "\n") }

    /// Whether `source` names a manifest by its extension (`.txt`, `.list`).
    public static func isManifestPath(_ path: String) -> Bool {
        let lower = path.lowercased()
        return lower.hasSuffix(".txt") || lower.hasSuffix(".list")
    }

    private static func resolve(_ entry: String, against source: String) -> String? {
        let lower = entry.lowercased()
        if lower.hasPrefix("http://") || lower.hasPrefix("https://") || lower.hasPrefix("file://") {
            guard URL(string: entry) != nil, !entry.contains(where: \.isWhitespace) else { return nil }
            return entry
        }
        if entry.contains("://") || entry.hasPrefix("<") { return nil }
        let pathLower = lower.split(separator: "?").first.map(String.init) ?? lower
        let isImage = [".jpg", ".jpeg", ".png", ".webp", ".avif", ".heic", ".heif", ".tif", ".tiff", ".gif", ".bmp"]
            .contains { pathLower.hasSuffix($0) }
        guard isImage || isManifestPath(pathLower) else { return nil }
        if entry.hasPrefix("/") {
            // An absolute path: relative to the manifest's host when it was fetched over HTTP.
            if let base = URL(string: source), let scheme = base.scheme?.lowercased(),
                scheme == "http" || scheme == "https"
            {
                return URL(string: entry, relativeTo: base)?.absoluteString
            }
            return entry
        }
        let sourceLower = source.lowercased()
        if sourceLower.hasPrefix("http://") || sourceLower.hasPrefix("https://") || sourceLower.hasPrefix("file://") {
            guard let encoded = entry.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed),
                let resolved = URL(string: encoded, relativeTo: URL(string: source))
            else { return nil }
            return resolved.absoluteString
        }
        return ((source as NSString).deletingLastPathComponent as NSString).appendingPathComponent(entry)
    }
}
