import CImageCodecs

/// A row encoder in C (one of the CImageCodecs shims), driven through its functions: the handle, the
/// message buffer and the status checks that `JPEGRowEncoder` (libjpeg-turbo), `PNGRowEncoder` (ours or
/// libpng) and `WholePictureEncoder` (libwebp or libavif) share. Closes the handle when it ends.
class CRowEncoder: RowEncoder {
    /// `write(encoder, pixels, stride, rows, cancel, message, capacity)`.
    typealias Write = (
        OpaquePointer, UnsafePointer<UInt8>, Int, Int32, UnsafePointer<sw_cancellation>,
        UnsafeMutablePointer<CChar>, Int
    ) -> Int32
    /// `finish(encoder, cancel, output, size, message, capacity)`.
    typealias Finish = (
        OpaquePointer, UnsafePointer<sw_cancellation>, UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>,
        UnsafeMutablePointer<Int>, UnsafeMutablePointer<CChar>, Int
    ) -> Int32

    private let encoder: OpaquePointer
    private let writeRows: Write
    private let finishImage: Finish
    private let close: (OpaquePointer) -> Void
    private let rowBytes: Int
    /// The format's name in error messages ("cannot encode PNG").
    private let name: String
    private var message = [CChar](repeating: 0, count: 512)

    /// Opens the encoder with `open(message, capacity)`; throws `.processing` with the C message when it fails.
    init(
        _ name: String, rowBytes: Int, open: (UnsafeMutablePointer<CChar>, Int) -> OpaquePointer?,
        write: @escaping Write, finish: @escaping Finish, close: @escaping (OpaquePointer) -> Void
    ) throws {
        var opening = [CChar](repeating: 0, count: 512)
        guard let opened = opening.withUnsafeMutableBufferPointer({ m in m.baseAddress.flatMap { open($0, m.count) } })
        else {
            throw ImagingError(.processing, "cannot encode \(name): \(CodecMessage.string(opening))")
        }
        (self.name, self.rowBytes, self.encoder) = (name, rowBytes, opened)
        (self.writeRows, self.finishImage, self.close) = (write, finish, close)
    }

    deinit { close(encoder) }

    func write(_ pixels: UnsafePointer<UInt8>, rows: Int, token: CancellationToken) throws {
        try perform(token: token) { encoder, cancel, message, capacity in
            writeRows(encoder, pixels, rowBytes, Int32(rows), cancel, message, capacity)
        }
    }

    func finish(token: CancellationToken) throws -> [UInt8]? {
        var output: UnsafeMutablePointer<UInt8>?
        var size = 0
        try perform(token: token) { encoder, cancel, message, capacity in
            finishImage(encoder, cancel, &output, &size, message, capacity)
        }
        return RowEncoders.take(output, size: size)
    }

    /// Runs one call of the C encoder with its handle, `token` as its cancellation and the message buffer;
    /// a failing status throws `.processing` with the C message ("cannot encode PNG: …").
    func perform(
        token: CancellationToken,
        _ call: (OpaquePointer, UnsafePointer<sw_cancellation>, UnsafeMutablePointer<CChar>, Int) -> Int32
    ) throws {
        let status = token.withCodecCallback { cancel in call(encoder, cancel, &message, message.count) }
        try CodecStatus.check(status, .processing, "cannot encode \(name)", message: message)
    }
}
