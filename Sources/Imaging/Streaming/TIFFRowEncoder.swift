import CImageCodecs

/// TIFF rows through libtiff, written as they come: 8-bit gray, RGB or RGBA (unassociated alpha), Deflate with the
/// horizontal predictor, 16 rows a strip, with the ICC profile and XMP (libtiff seeks in its output: a file, or a
/// buffer in memory). EXIF is not written (it would need an EXIF directory of its own).
final class TIFFRowEncoder: CRowEncoder {
    init(width: Int, height: Int, channels: Int, metadata: ImageMetadata = .none, destination: ImageDestination) throws {
        let (w, h, c) = (Int32(clamping: width), Int32(clamping: height), Int32(channels))
        try super.init(
            "TIFF", rowBytes: width * channels,
            open: { m, n in metadata.withUnsafeMetadata { sw_tiff_encoder_open(w, h, c, 0, destination.file, $0, m, n) } },
            write: sw_tiff_encoder_write, finish: sw_tiff_encoder_finish, close: sw_tiff_encoder_close)
    }
}
