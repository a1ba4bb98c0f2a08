/// What a simulated photo looks like to the coordinator: the figures a real worker reports for it (the
/// downloaded file's size and media type; the output's size, CRC-32C and dimensions), without any bytes.
public struct SimulatedPhoto: Sendable, Equatable {
    /// The downloaded file's size in bytes (`TaskOutput.size` of the download held on the worker).
    public var downloadBytes: UInt64
    /// The downloaded file's media type, e.g. `image/jpeg`.
    public var mediaType: String
    /// The tilt-shift output's size in bytes.
    public var outputBytes: UInt64
    /// The CRC-32C of the output's bytes, as a sink reports it.
    public var outputCRC32C: UInt32
    /// The output's width and height in pixels (a tilt-shift keeps the input's).
    public var width: UInt32
    public var height: UInt32

    /// Creates a photo's figures.
    public init(
        downloadBytes: UInt64, mediaType: String, outputBytes: UInt64, outputCRC32C: UInt32, width: UInt32,
        height: UInt32
    ) {
        self.downloadBytes = downloadBytes
        self.mediaType = mediaType
        self.outputBytes = outputBytes
        self.outputCRC32C = outputCRC32C
        self.width = width
        self.height = height
    }

    /// A 12-megapixel JPEG (4000×3000) as `scripts/bench-data-path` measures one: about 6 MB downloaded
    /// (5.5–6.5 MB), about 1 MB written (0.9–1.1 MB). Sizes and checksum are derived from `source` (FNV-1a),
    /// so every photo of a batch differs and every run repeats.
    public static func twelveMegapixel(source: String) -> SimulatedPhoto {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in source.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        return SimulatedPhoto(
            downloadBytes: 5_500_000 + hash % 1_000_000, mediaType: "image/jpeg",
            outputBytes: 900_000 + (hash >> 20) % 200_000, outputCRC32C: UInt32(truncatingIfNeeded: hash >> 32),
            width: 4000, height: 3000)
    }
}
