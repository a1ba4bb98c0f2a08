import CImageCodecs

/// PNG, 8 or 16 bits per channel, every row with the Up filter (see `PNGCodec.defaultCompressionLevel`).
///
/// The fast levels (1…3, the default 3 among them) go through our own encoder (`png_fast.c`: ISA-L's igzip,
/// about six times faster than zlib at level 3 for files a few per cent larger); level 0 and the slow levels
/// 4…9 through libpng and zlib at that level.
final class PNGRowEncoder: CRowEncoder {
    /// The zlib levels that our ISA-L encoder serves.
    static let fastLevels = 1...3

    /// `metadata`: the ICC profile and EXIF are written (iCCP, eXIf); PNG has no place here for the rest.
    /// `bitsPerSample` 16 takes host-order `UInt16` samples (2 bytes each) and writes a 16-bit PNG.
    init(
        width: Int, height: Int, channels: Int, level: Int, metadata: ImageMetadata = .none,
        bitsPerSample: Int = 8, destination: ImageDestination
    ) throws {
        let (w, h, c, d) = (Int32(clamping: width), Int32(clamping: height), Int32(channels), Int32(bitsPerSample))
        let rowBytes = width * channels * bitsPerSample / 8
        if Self.fastLevels.contains(level) {
            try super.init(
                "PNG", rowBytes: rowBytes,
                open: { m, n in
                    metadata.withUnsafeMetadata {
                        sw_png_fast_encoder_open_depth(w, h, c, d, destination.file, $0, m, n)
                    }
                },
                write: sw_png_fast_encoder_write,
                finish: { e, _, output, size, m, n in sw_png_fast_encoder_finish(e, output, size, m, n) },
                close: sw_png_fast_encoder_close)
        } else {
            try super.init(
                "PNG", rowBytes: rowBytes,
                open: { m, n in
                    metadata.withUnsafeMetadata {
                        sw_png_encoder_open_depth(
                            w, h, c, d, Int32(level), SW_PNG_FILTER_UP, destination.file, $0, m, n)
                    }
                },
                write: sw_png_encoder_write,
                finish: { e, _, output, size, m, n in sw_png_encoder_finish(e, output, size, m, n) },
                close: sw_png_encoder_close)
        }
    }
}
