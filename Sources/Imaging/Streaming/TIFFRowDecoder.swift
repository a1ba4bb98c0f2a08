import CImageCodecs

/// TIFF rows through libtiff (via the CImageCodecs shim), the first page only: 8 and 16-bit gray, gray with alpha
/// (as RGBA), RGB, RGBA and CMYK, in strips (read row by row) or tiles (a row of tiles at a time); anything else
/// libtiff reads (palette, bilevel, YCbCr, separate planes) through its RGBA reader, a strip or a row of tiles at a
/// time. 16-bit samples are rounded to 8 bits. CMYK becomes RGB naively unless `keepCMYK` hands the CMYK rows to
/// a colour profile (`ColourManagement`). Rows come out as stored: `orientation` is the Orientation tag.
final class TIFFRowDecoder: CMYKRowDecoder {
    let width: Int
    let height: Int
    /// 1, 3 or 4; 4 (CMYK as stored) after `keepCMYK`.
    private(set) var channels: Int
    /// Whether the page is CMYK (converted to RGB unless `keepCMYK` is called).
    let isCMYK: Bool
    /// The Orientation tag (1…8; 1 when absent).
    let orientation: Int
    /// Pages after the first (not read).
    let morePages: Int
    let metadata: ImageMetadata
    let formatName = "TIFF"
    /// 8, or 16 after `keepDeep`.
    private(set) var bitsPerSample = 8
    private let decoder: OpaquePointer
    private var message = [CChar](repeating: 0, count: 512)

    /// Reads the header and checks the size against `limits` (`source` must outlive the decoder).
    init(_ source: ImageSource, limits: ImageLimits) throws {
        let opened = try source.openDecoder(
            "TIFF", limits: limits, memory: sw_tiff_open, file: sw_tiff_open_file,
            metadata: sw_tiff_metadata)
        (decoder, width, height, channels, metadata) = (
            opened.handle, opened.width, opened.height, opened.channels, opened.metadata
        )
        (orientation, morePages, isCMYK) = (
            opened.orientation, Int(opened.info.more_frames), opened.info.converted_from_cmyk != 0
        )
        try limits.checkPixels(width: width, height: height)
    }

    deinit { sw_tiff_close(decoder) }

    func keepCMYK() -> Bool? {
        guard sw_tiff_keep_cmyk(decoder) != 0 else { return nil }
        channels = 4
        return false
    }

    /// Keeps a 16-bit gray, gray+alpha, RGB or RGBA page's 16 bits (before the first row); false when the page is
    /// not one of those, or is read through libtiff's RGBA reader.
    func keepDeep() -> Bool {
        guard sw_tiff_keep_16(decoder) != 0 else { return false }
        bitsPerSample = 16
        return true
    }

    func read(into pixels: UnsafeMutablePointer<UInt8>, rows: Int, token: CancellationToken) throws {
        let status = token.withCodecCallback { cancel in
            sw_tiff_read_rows(decoder, pixels, rowBytes, Int32(rows), cancel, &message, message.count)
        }
        try CodecStatus.check(status, .decode, "cannot read TIFF", message: message)
    }
}
