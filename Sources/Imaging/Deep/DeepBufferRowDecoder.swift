/// The rows of a 16-bit image already decoded whole (an interlaced 16-bit PNG, a 10 or 12-bit AVIF), served from memory.
final class DeepBufferRowDecoder: RowDecoder {
    let width: Int
    let height: Int
    let channels: Int
    let bitsPerSample = 16
    let metadata: ImageMetadata
    let sourceBitsPerSample: Int
    private let rows: [UInt8]
    private var next = 0

    /// `rows`: `decoder`'s every row (`decoder.rowBytes × height` bytes).
    convenience init(_ decoder: RowDecoder, rows: [UInt8]) {
        self.init(width: decoder.width, height: decoder.height, channels: decoder.channels, metadata: decoder.metadata,
                  sourceBits: 16, rows: rows)
    }

    /// `rows`: `height` rows of `width × channels` 16-bit samples; `sourceBits`: the depth stored in the file.
    init(width: Int, height: Int, channels: Int, metadata: ImageMetadata, sourceBits: Int, rows: [UInt8]) {
        (self.width, self.height, self.channels, self.metadata) = (width, height, channels, metadata)
        precondition(rows.count == width * channels * 2 * height)
        self.sourceBitsPerSample = sourceBits
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
