import CImageCodecs

/// WebP (libwebp) or AVIF (libavif), which encode a whole picture: the rows written are collected
/// (`width × height × 3` bytes, 4 with alpha; gray is widened to RGB) and encoded in `finish`, where the rows are
/// freed as soon as the library holds its own Y'CbCr copy. The memory this takes is bounded by the pixel limit
/// (`ImageLimits.maxPixels`), like the decoders', not by the streaming window. The ICC profile, EXIF (orientation
/// reset to 1) and XMP are written (WebP's ICCP/EXIF/XMP chunks, AVIF's colr/Exif/XMP items).
final class WholePictureEncoder: CRowEncoder {
    /// `format` is `.webp` or `.avif`; `quality` 1…100. `avifDepth` 10 or 12: AVIF from rows of 16-bit samples (host-order
    /// `UInt16`), written at that depth.
    init(
        _ format: ImageFormat, width: Int, height: Int, channels: Int, quality: Int, metadata: ImageMetadata = .none,
        avifDepth: Int? = nil, destination: ImageDestination
    ) throws {
        let (w, h, c, q) = (
            Int32(clamping: width), Int32(clamping: height), Int32(channels), Int32(max(1, min(100, quality)))
        )
        if format == .avif, let avifDepth {
            try super.init(
                "AVIF", rowBytes: width * channels * 2,
                open: { m, n in
                    metadata.withUnsafeMetadata {
                        sw_avif_encoder_open_deep(w, h, c, Int32(avifDepth), q, destination.file, $0, m, n)
                    }
                },
                write: sw_avif_encoder_write, finish: sw_avif_encoder_finish, close: sw_avif_encoder_close)
            return
        }
        switch format {
        case .webp:
            try super.init(
                "WebP", rowBytes: width * channels,
                open: { m, n in
                    metadata.withUnsafeMetadata { sw_webp_encoder_open(w, h, c, q, destination.file, $0, m, n) }
                },
                write: sw_webp_encoder_write, finish: sw_webp_encoder_finish, close: sw_webp_encoder_close)
        case .avif:
            try super.init(
                "AVIF", rowBytes: width * channels,
                open: { m, n in
                    metadata.withUnsafeMetadata { sw_avif_encoder_open(w, h, c, q, destination.file, $0, m, n) }
                },
                write: sw_avif_encoder_write, finish: sw_avif_encoder_finish, close: sw_avif_encoder_close)
        case .jpeg, .png, .tiff, .heif, .gif, .bmp:
            throw ImagingError(.processing, "\(format.rawValue) is not encoded as a whole picture here")
        }
    }
}
