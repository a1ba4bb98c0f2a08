import Imaging

/// Where a source string points: an `http(s)://` URL, or a local file (a `file://` URL or a path).
enum FetchSource: Equatable {
    /// An `http://` or `https://` URL, as given.
    case http(String)
    /// A local file, by its path (a `file://` URL's path is percent-decoded).
    case localFile(path: String)
    /// An object of an S3 bucket (`s3://BUCKET/KEY`), read with a signed GET.
    case s3(S3Location)

    /// Parses `source`. Throws `ImagingError` of kind `.download` for an unsupported URL scheme or a
    /// `file://` URL that is not absolute.
    init(_ source: String) throws(ImagingError) {
        let lower = source.lowercased()
        if lower.hasPrefix("http://") || lower.hasPrefix("https://") {
            self = .http(source)
        } else if S3Location.isS3(source) {
            do {
                self = .s3(try S3Location(source))
            } catch {
                throw ImagingError(.download, error.description)
            }
        } else if lower.hasPrefix("file://") {
            var rest = String(source.dropFirst("file://".count))
            // file://localhost/path and file:///path
            if rest.lowercased().hasPrefix("localhost/") { rest = String(rest.dropFirst("localhost".count)) }
            guard rest.hasPrefix("/") else {
                throw ImagingError(.download, "\(source): only file:///absolute/path URLs are supported")
            }
            self = .localFile(path: LocalFileReader.percentDecoded(rest))
        } else if let colon = source.firstIndex(of: ":"), source[colon...].hasPrefix("://"),
            Self.isScheme(source[..<colon])
        {
            throw ImagingError(
                .download, "\(source): unsupported URL scheme '\(source[..<colon])' (use http, https, s3 or file)")
        } else {
            self = .localFile(path: source)
        }
    }

    /// Whether `text` is a URL scheme (RFC 3986: a letter, then letters, digits, `+`, `-` or `.`), of
    /// more than one character (`C:` is a Windows drive, not a scheme).
    private static func isScheme(_ text: Substring) -> Bool {
        guard text.count > 1, let first = text.unicodeScalars.first,
            ("a"..."z").contains(first) || ("A"..."Z").contains(first)
        else {
            return false
        }
        return text.unicodeScalars.allSatisfy { scalar in
            ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar)
                || scalar == "+" || scalar == "-" || scalar == "."
        }
    }
}
