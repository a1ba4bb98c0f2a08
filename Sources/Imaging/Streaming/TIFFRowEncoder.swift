import CImageCodecs

/// TIFF rows through libtiff, written as they come: 8 or 16-bit gray, RGB or RGBA (unassociated alpha), Deflate with the
/// horizontal predictor, 16 rows a strip, with the ICC profile and XMP (libtiff seeks in its output: a file, or a
/// buffer in memory). EXIF is not written (it would need an EXIF directory of its own).
final class TIFFRowEncoder: CRowEncoder {
    /// `bitsPerSample` 16 takes host-order `UInt16` samples (2 bytes each) and writes 16 bits a sample.
    init(
        width: Int, height: Int, channels: Int, metadata: ImageMetadata = .none, bitsPerSample: Int = 8,
        destination: ImageDestination
    ) throws {
        let (w, h, c, d) = (Int32(clamping: width), Int32(clamping: height), Int32(channels), Int32(bitsPerSample))
        try super.init(
            "TIFF", rowBytes: width * channels * bitsPerSample / 8,
            open: { m, n in
                metadata.withUnsafeMetadata { sw_tiff_encoder_open_depth(w, h, c, d, 0, destination.file, $0, m, n) }
            },
            write: sw_tiff_encoder_write, finish: sw_tiff_encoder_finish, close: sw_tiff_encoder_close)
    }
}
