/// The rows of a 16-bit image already decoded whole (an interlaced 16-bit PNG), served from memory.
final class DeepBufferRowDecoder: RowDecoder {
    let width: Int
    let height: Int
    let channels: Int
    let bitsPerSample = 16
    let metadata: ImageMetadata
    private let rows: [UInt8]
    private var next = 0

    /// `rows`: `decoder`'s every row (`decoder.rowBytes × height` bytes).
    init(_ decoder: RowDecoder, rows: [UInt8]) {
        (width, height, channels, metadata) = (decoder.width, decoder.height, decoder.channels, decoder.metadata)
        precondition(rows.count == width * channels * 2 * height)
        self.rows = rows
    }

    func read(into pixels: UnsafeMutablePointer<UInt8>, rows count: Int, token: CancellationToken) throws {
        try token.check()
        let bytes = rowBytes
        rows.withUnsafeBufferPointer { source in
            guard let base = source.baseAddress else { return }
            pixels.update(from: base + next * bytes, count: count * bytes)
        }
        next += count
    }
}
