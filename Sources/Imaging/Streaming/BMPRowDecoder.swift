import CImageCodecs

/// Windows BMP rows through our own reader (CImageCodecs' bmp.c: every header field checked before use): 1, 4 and
/// 8-bit palettes, 16, 24 and 32-bit pixels (bit fields, alpha as RGBA), top-down or bottom-up (a file is read
/// from its last row up, seeking, so it streams either way). RLE and embedded JPEG/PNG are refused; a V5 header's
/// embedded ICC profile is kept.
final class BMPRowDecoder: RowDecoder {
    let width: Int
    let height: Int
    let channels: Int
    let metadata: ImageMetadata
    private let decoder: OpaquePointer
    private var message = [CChar](repeating: 0, count: 512)

    /// Reads the headers and checks the size against `limits` (`source` must outlive the decoder).
    init(_ source: ImageSource, limits: ImageLimits) throws {
        let opened = try source.openDecoder(
            "BMP", limits: limits, memory: sw_bmp_open, file: sw_bmp_open_file,
            metadata: sw_bmp_metadata)
        (decoder, width, height, channels, metadata) = (
            opened.handle, opened.width, opened.height, opened.channels, opened.metadata
        )
        try limits.checkPixels(width: width, height: height)
    }

    deinit { sw_bmp_close(decoder) }

    func read(into pixels: UnsafeMutablePointer<UInt8>, rows: Int, token: CancellationToken) throws {
        let status = token.withCodecCallback { cancel in
            sw_bmp_read_rows(decoder, pixels, width * channels, Int32(rows), cancel, &message, message.count)
        }
        try CodecStatus.check(status, .decode, "cannot read BMP", message: message)
    }
}
