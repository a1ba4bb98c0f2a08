import CImageCodecs

/// PNG rows through libpng (via the CImageCodecs shim): palette, gray below 8 bits and tRNS are expanded,
/// 16-bit samples scaled to 8 bits (kept at 16 with `keepDeep`), gray+alpha becomes RGBA. An interlaced (Adam7) image cannot be read row
/// by row: `readWhole` decodes it.
final class PNGRowDecoder: RowDecoder {
    let width: Int
    let height: Int
    let channels: Int
    let interlaced: Bool
    let metadata: ImageMetadata
    let bitsPerSample: Int
    private let decoder: OpaquePointer
    private var message = [CChar](repeating: 0, count: 512)

    /// Reads the header and checks the size against `limits` (`source` must outlive the decoder). With `keepDeep`
    /// a 16-bit PNG keeps its 16 bits (`bitsPerSample`).
    init(_ source: ImageSource, limits: ImageLimits, keepDeep: Bool = false) throws {
        let opened = try source.openDecoder(
            "PNG", limits: limits, memory: keepDeep ? sw_png_open16 : sw_png_open,
            file: keepDeep ? sw_png_open_file16 : sw_png_open_file, metadata: sw_png_metadata)
        self.bitsPerSample = keepDeep && opened.info.source_bit_depth == 16 ? 16 : 8
        (decoder, width, height, channels, metadata) = (
            opened.handle, opened.width, opened.height, opened.channels, opened.metadata
        )
        self.interlaced = opened.info.interlaced != 0
        try limits.checkPixels(width: width, height: height)
    }

    deinit { sw_png_close(decoder) }

    func read(into pixels: UnsafeMutablePointer<UInt8>, rows: Int, token: CancellationToken) throws {
        let status = token.withCodecCallback { cancel in
            sw_png_read_rows(decoder, pixels, rowBytes, Int32(rows), cancel, &message, message.count)
        }
        try CodecStatus.check(status, .decode, "cannot read PNG", message: message)
    }

    /// Decodes the whole image, interlaced or not, into `rowBytes × height` bytes (any depth).
    func readWholeRows(token: CancellationToken) throws -> [UInt8] {
        try [UInt8](unsafeUninitializedCapacity: rowBytes * height) { buffer, count in
            guard let base = buffer.baseAddress else { return }
            let status = token.withCodecCallback { cancel in
                sw_png_read(decoder, base, rowBytes, cancel, &message, message.count)
            }
            try CodecStatus.check(status, .decode, "cannot read PNG", message: message)
            count = rowBytes * height
        }
    }

    /// Decodes the whole image, interlaced or not.
    func readWhole(token: CancellationToken) throws -> ImageBuffer {
        try ImageBuffer(width: width, height: height, channels: channels) { pixels in
            guard let base = pixels.baseAddress else { return }
            let status = token.withCodecCallback { cancel in
                sw_png_read(decoder, base, width * channels, cancel, &message, message.count)
            }
            try CodecStatus.check(status, .decode, "cannot read PNG", message: message)
        }
    }
}
