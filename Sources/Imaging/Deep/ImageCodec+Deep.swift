/// An image decoded at its own depth (`ImageCodec.decodeKeepingDepth`): 8-bit samples, or 16-bit ones of a 16-bit PNG
/// or TIFF or a 10 or 12-bit AVIF.
public struct DecodedSamples: Sendable, Equatable {
    public let width: Int
    public let height: Int
    /// 1 (gray), 3 (RGB) or 4 (RGBA; gray+alpha becomes RGBA).
    public let channels: Int
    /// 8 or 16.
    public let bitsPerSample: Int
    /// The depth stored in the file (10 or 12 for such an AVIF, read at 16 bits).
    public let sourceBitsPerSample: Int
    /// `width × height × channels` samples, rows top to bottom (0…255 at 8 bits, 0…65535 at 16).
    public let samples: [UInt16]
}

extension ImageCodec {
    /// Decodes `data` as the pipeline reads it, 16-bit PNG and TIFF at 16 bits (`RowDecoders.open` with
    /// `keepDeep`). For the fuzzer and tools; `decode` gives 8-bit pixels of any image.
    public static func decodeKeepingDepth(_ data: [UInt8], limits: ImageLimits = .default) throws -> DecodedSamples {
        try data.withUnsafeBufferPointer { bytes in
            try CancellationToken.with(nil) { token in
                let (decoder, _, _) = try RowDecoders.open(.memory(bytes), limits: limits, keepDeep: true, token: token)
                var raw = [UInt8](repeating: 0, count: decoder.rowBytes * decoder.height)
                try raw.withUnsafeMutableBufferPointer { pixels in
                    guard let base = pixels.baseAddress else { return }
                    try decoder.read(into: base, rows: decoder.height, token: token)
                }
                let samples =
                    decoder.bitsPerSample == 16
                    ? raw.withUnsafeBytes { Array($0.bindMemory(to: UInt16.self)) }
                    : raw.map(UInt16.init)
                return DecodedSamples(
                    width: decoder.width, height: decoder.height, channels: decoder.channels,
                    bitsPerSample: decoder.bitsPerSample, sourceBitsPerSample: decoder.sourceBitsPerSample,
                    samples: samples)
            }
        }
    }
}
