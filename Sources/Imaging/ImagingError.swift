/// An error from the Imaging layer: what went wrong, in words that say what to do about it.
public struct ImagingError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The broad category, for callers that react differently (retry a download, report a bad image…).
    public enum Kind: Sendable, Equatable {
        /// Fetching the bytes failed (HTTP status, network, timeout, missing local file).
        case download
        /// The bytes are not a readable JPEG, PNG, WebP, AVIF, HEIF, TIFF, GIF or BMP image.
        case decode
        /// Bad parameters, or encoding/filtering failed.
        case processing
        /// A size limit (bytes or pixels) was exceeded; the message names the limit and how to raise it.
        case limit
        /// The work was cancelled.
        case cancelled
    }

    public let kind: Kind
    public let message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }

    package static let cancelledError = ImagingError(.cancelled, "cancelled")

    /// An output format that is only read (HEIF, GIF, BMP), naming the formats that are written.
    package static func notWritable(_ format: ImageFormat) -> ImagingError {
        ImagingError(
            .processing, "cannot write \(format.displayName) images: the output formats are \(ImageFormat.names)")
    }
}
