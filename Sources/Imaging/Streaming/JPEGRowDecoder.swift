import CImageCodecs

/// JPEG rows through libjpeg-turbo (via the CImageCodecs shim): gray stays gray, YCbCr becomes RGB,
/// CMYK/YCCK becomes RGB naively unless `keepCMYK` hands the CMYK rows to a colour profile
/// (`ColourManagement`).
final class JPEGRowDecoder: CMYKRowDecoder {
    let width: Int
    let height: Int
    /// 1 or 3; 4 (CMYK as stored) after `keepCMYK`.
    private(set) var channels: Int
    /// Whether the JPEG is CMYK or YCCK (converted to RGB unless `keepCMYK` is called).
    let isCMYK: Bool
    /// The EXIF orientation (1…8; 1 when absent). Rows come out as stored, not turned.
    let orientation: Int
    let metadata: ImageMetadata
    let formatName = "JPEG"
    private let decoder: OpaquePointer
    private var message = [CChar](repeating: 0, count: 512)

    /// Reads the header and checks the size against `limits` (`source` must outlive the decoder).
    init(_ source: ImageSource, limits: ImageLimits) throws {
        let opened = try source.openDecoder(
            "JPEG", limits: limits, memory: sw_jpeg_open, file: sw_jpeg_open_file,
            metadata: sw_jpeg_metadata)
        (decoder, width, height, channels, metadata) = (
            opened.handle, opened.width, opened.height, opened.channels, opened.metadata
        )
        self.orientation = opened.orientation
        self.isCMYK = opened.info.converted_from_cmyk != 0
        try limits.checkPixels(width: width, height: height)
    }

    deinit { sw_jpeg_close(decoder) }

    /// Makes a CMYK JPEG (before any row is read) hand out its CMYK rows as stored, 4 bytes a pixel, for a
    /// colour profile to convert; returns whether they are Adobe's inverted CMYK, nil when not CMYK.
    func keepCMYK() -> Bool? {
        let kind = sw_jpeg_keep_cmyk(decoder)
        guard kind != 0 else { return nil }
        channels = 4
        return kind == 2
    }

    /// Switches to the raw Y'CbCr planes (before any row is read); nil, with the reason, when they cannot be
    /// used (then rows can still be read).
    func startPlanes() -> (planes: sw_jpeg_planes?, reason: String) {
        var planes = sw_jpeg_planes()
        let status = sw_jpeg_start_planes(decoder, &planes, &message, message.count)
        return status == SW_CODEC_OK ? (planes, "") : (nil, CodecMessage.string(message))
    }

    /// Decodes the next group of plane rows (`sw_jpeg_planes.group_rows`) into `buffers`.
    func readPlanes(into buffers: [UnsafeMutablePointer<UInt8>], strides: [Int], token: CancellationToken) throws {
        var pointers: [UnsafeMutablePointer<UInt8>?] = buffers
        let status = token.withCodecCallback { cancel in
            sw_jpeg_read_planes(decoder, &pointers, strides, cancel, &message, message.count)
        }
        try CodecStatus.check(status, .decode, "cannot read JPEG", message: message)
    }

    func read(into pixels: UnsafeMutablePointer<UInt8>, rows: Int, token: CancellationToken) throws {
        let status = token.withCodecCallback { cancel in
            sw_jpeg_read_rows(decoder, pixels, width * channels, Int32(rows), cancel, &message, message.count)
        }
        try CodecStatus.check(status, .decode, "cannot read JPEG", message: message)
    }
}
