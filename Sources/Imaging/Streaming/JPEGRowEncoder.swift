import CImageCodecs

/// JPEG through libjpeg-turbo: gray stays gray, RGB is stored as YCbCr 4:2:0, RGBA is composited over white.
final class JPEGRowEncoder: CRowEncoder {
    init(
        width: Int, height: Int, channels: Int, quality: Int, metadata: ImageMetadata = .none,
        destination: ImageDestination
    ) throws {
        let (w, h, c, q) = (
            Int32(clamping: width), Int32(clamping: height), Int32(channels), JPEGRowEncoder.clamped(quality)
        )
        try super.init(
            "JPEG", rowBytes: width * channels,
            open: { m, n in metadata.withUnsafeMetadata { sw_jpeg_encoder_open(w, h, c, q, destination.file, $0, m, n) }
            },
            write: sw_jpeg_encoder_write, finish: JPEGRowEncoder.finishJPEG, close: sw_jpeg_encoder_close)
    }

    /// An encoder of raw Y'CbCr planes laid out as `planes` (the decoder's: the sampling is kept).
    init(
        width: Int, height: Int, planes: sw_jpeg_planes, quality: Int, metadata: ImageMetadata = .none,
        destination: ImageDestination
    ) throws {
        let (w, h, q) = (Int32(clamping: width), Int32(clamping: height), JPEGRowEncoder.clamped(quality))
        var planes = planes
        try super.init(
            "JPEG", rowBytes: 0,
            open: { m, n in
                metadata.withUnsafeMetadata {
                    sw_jpeg_encoder_open_planes(w, h, &planes, q, destination.file, $0, m, n)
                }
            },
            write: sw_jpeg_encoder_write, finish: JPEGRowEncoder.finishJPEG, close: sw_jpeg_encoder_close)
    }

    /// Encodes the next group of plane rows (`sw_jpeg_planes.group_rows`, padding filled in).
    func writePlanes(_ buffers: [UnsafeMutablePointer<UInt8>], strides: [Int], token: CancellationToken) throws {
        var pointers: [UnsafeMutablePointer<UInt8>?] = buffers
        try perform(token: token) { encoder, cancel, message, capacity in
            sw_jpeg_encoder_write_planes(encoder, &pointers, strides, cancel, message, capacity)
        }
    }

    /// libjpeg-turbo's quality, 1…100.
    private static func clamped(_ quality: Int) -> Int32 { Int32(max(1, min(100, quality))) }

    /// The finish of a JPEG, which has no cancellation to check (the rows are all written by then).
    private static func finishJPEG(
        _ encoder: OpaquePointer, _: UnsafePointer<sw_cancellation>,
        _ output: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>,
        _ size: UnsafeMutablePointer<Int>, _ message: UnsafeMutablePointer<CChar>, _ capacity: Int
    ) -> Int32 {
        sw_jpeg_encoder_finish(encoder, output, size, message, capacity)
    }
}
