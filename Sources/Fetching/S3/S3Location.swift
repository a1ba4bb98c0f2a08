import Foundation

/// An object (or a prefix) of an S3 bucket, `s3://BUCKET/KEY`, and the HTTP URL to reach it: path-style
/// at an S3-compatible endpoint (`http://127.0.0.1:9000/BUCKET/KEY`), or virtual-hosted at AWS
/// (`https://BUCKET.s3.REGION.amazonaws.com/KEY`).
public struct S3Location: Sendable, Equatable, CustomStringConvertible {
    public let bucket: String
    /// The key (no leading `/`); empty for a bucket's root.
    public let key: String

    public var description: String { key.isEmpty ? "s3://\(bucket)" : "s3://\(bucket)/\(key)" }

    /// Whether `text` is an `s3://` URL.
    public static func isS3(_ text: String) -> Bool { text.lowercased().hasPrefix("s3://") }

    /// Parses `s3://BUCKET[/KEY]`.
    ///
    /// - Throws: `S3Error` when it is not one, or the bucket name is not a valid one (3–63 of `a–z 0–9 . -`).
    public init(_ text: String) throws(S3Error) {
        guard Self.isS3(text) else { throw S3Error("\(text): not an s3://BUCKET/KEY URL") }
        let rest = text.dropFirst("s3://".count)
        let slash = rest.firstIndex(of: "/")
        let bucket = String(rest[..<(slash ?? rest.endIndex)])
        guard (3...63).contains(bucket.count),
            bucket.unicodeScalars.allSatisfy({
                ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "." || $0 == "-"
            })
        else {
            throw S3Error(
                "\(text): '\(bucket)' is not a valid bucket name (3 to 63 lowercase letters, digits, '.' or '-')")
        }
        self.bucket = bucket
        self.key = slash.map { String(rest[rest.index(after: $0)...]) } ?? ""
    }

    init(bucket: String, key: String) {
        self.bucket = bucket
        self.key = key
    }

    /// This location with `name` appended as a key segment (a prefix ends with `/` whether or not it was given one).
    public func appending(_ name: String) -> S3Location {
        S3Location(bucket: bucket, key: key.isEmpty || key.hasSuffix("/") ? key + name : key + "/" + name)
    }

    /// The HTTP URL of the object: path-style under `endpoint` when one is given, else AWS's for `region`.
    func url(endpoint: String?, region: String) -> String {
        let path = key.split(separator: "/", omittingEmptySubsequences: false).map {
            String($0).addingPercentEncoding(withAllowedCharacters: Self.unreserved) ?? String($0)
        }.joined(separator: "/")
        if let endpoint, !endpoint.isEmpty {
            let base = endpoint.hasSuffix("/") ? String(endpoint.dropLast()) : endpoint
            return "\(base)/\(bucket)/\(path)"
        }
        return "https://\(bucket).s3.\(region).amazonaws.com/\(path)"
    }

    /// RFC 3986's unreserved characters: what SigV4 leaves unencoded in a path segment.
    private static let unreserved = CharacterSet(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
}

/// An S3 request that cannot be made or failed: names the object and the reason, never credentials.
public struct S3Error: Error, CustomStringConvertible, Sendable {
    public let description: String
    /// Whether trying again may help (a 5xx, a connection problem).
    public let isTransient: Bool

    public init(_ description: String, isTransient: Bool = false) {
        self.description = description
        self.isTransient = isTransient
    }
}
