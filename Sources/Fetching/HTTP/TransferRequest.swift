/// One HTTP(S) request for the ``TransferLoop``: a GET (or, with `upload`, a PUT), the URL and every limit
/// the transfer must keep.
struct TransferRequest: Sendable {
    /// An `http://` or `https://` URL.
    var url: String
    /// The largest body accepted, in bytes: a `Content-Length` over it is refused before the body, and
    /// a body that grows past it is abandoned at once.
    var maxBytes: Int
    /// How long connecting (name resolution and TLS included) may take.
    var connectTimeout: Duration
    /// How long the whole transfer (redirects and body included) may take.
    var timeout: Duration
    /// How long the server may stay silent: no header or body byte since the request started or since
    /// the last byte.
    var readTimeout: Duration
    /// The lowest average rate, in bytes per second, over `minimumRateWindow` (0: no minimum).
    var minimumRate: Int
    /// The window over which `minimumRate` is measured (whole seconds; at least 1).
    var minimumRateWindow: Duration
    /// Redirects followed (0: none). Only to `http` and `https` URLs.
    var maxRedirects: Int
    /// A PUT of these bytes instead of a GET (an S3 upload: one request, so an object is whole or absent).
    var upload: Upload?
    /// Which addresses the transfer may connect to (first request, every redirect, the S3 endpoint);
    /// ``SourcePolicy/unrestricted``: every address, and no check.
    var sourcePolicy: SourcePolicy = .unrestricted
    /// Signs the request with AWS Signature Version 4 (libcurl's `CURLOPT_AWS_SIGV4`).
    var signing: S3Credentials?

    /// The body of a PUT.
    struct Upload: Sendable {
        let bytes: [UInt8]
        let contentType: String
    }
}
