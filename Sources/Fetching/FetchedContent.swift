import Imaging

/// What a source turned out to hold: an image, or a manifest of more sources.
public enum FetchedContent: Sendable {
    /// An image of a format Imaging reads (JPEG, PNG, WebP, AVIF, HEIF, TIFF, GIF or BMP).
    case image(EncodedImage)
    /// A list of images (see ``Manifest``).
    case manifest(Manifest)

    /// Recognises `data` read from `source`: an image by its magic bytes, else a manifest, else an
    /// `ImagingError` of kind `.decode` that says what the bytes look like.
    init(recognising data: [UInt8], from source: String) throws(ImagingError) {
        if let format = ImageFormat(sniffing: data) {
            self = .image(EncodedImage(data: data, format: format))
        } else if let manifest = Manifest(parsing: data, source: source) {
            self = .manifest(manifest)
        } else {
            throw ImagingError(.decode, "\(SourceRedaction.redact(source)): \(ImageFormat.unrecognisedMessage(data))")
        }
    }
}
