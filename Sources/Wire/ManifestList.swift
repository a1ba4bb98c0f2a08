/// How a download's output lists the entries of a manifest on the wire: the one place that knows the
/// format, for the worker that writes it, the coordinator that expands the batch with it, and clients.
///
/// A manifest item's download succeeds with a `TaskOutput` whose `media_type` is ``mediaType`` and whose
/// `data` is UTF-8 text: one absolute URL or path a line, lines separated by `\n` (no `\r`), no blank lines
/// and no comments (the worker normalizes what it fetched). The manifest item's own ``ItemFinished`` has
/// the same media type and no data.
public enum ManifestList {
    /// The media type of a manifest's entry list (RFC 2483's `text/uri-list`, in the normalized form above).
    public static let mediaType = "text/uri-list"

    /// The list's bytes for `entries` (each already absolute, without line breaks).
    public static func encode(_ entries: [String]) -> [UInt8] {
        Array(entries.joined(separator: "\n").utf8)
    }

    /// The entries listed in `data`, in order; empty lines are skipped.
    public static func entries(in data: [UInt8]) -> [String] {
        String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init).filter { !$0.isEmpty }
    }

    /// Whether `output` is a manifest's entry list (or a manifest item's result, which has no data).
    public static func isList(_ output: TaskOutput) -> Bool {
        output.mediaType == mediaType
    }
}
