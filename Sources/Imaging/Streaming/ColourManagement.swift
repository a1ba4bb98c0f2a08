import CImageCodecs

/// What happens to an input's colours (`EncodingOptions.colour`).
public enum ColourPolicy: String, Sendable, CaseIterable {
    /// The pixels stay as they are and the ICC profile goes with them into the output.
    case keep
    /// Pixels described by an ICC profile are converted to sRGB (through LittleCMS) and the output carries no
    /// profile (sRGB is what viewers assume without one).
    case srgb
}

/// Applies the colour policy to a decoder: what to convert, which profile to carry, what to warn about.
///
/// - A CMYK or YCCK JPEG, or a CMYK TIFF, is always converted (the output is RGB): through its embedded profile to sRGB when it
///   has a usable one, else naively (R = (1−C)(1−K)…) with a warning.
/// - A profile LittleCMS cannot read, or one for another colour space than the image's, is ignored (neither
///   applied nor carried) with a warning: the image is still processed.
/// - With `.srgb`, an RGB image with a profile is converted to sRGB; gray and RGBA images keep theirs (with
///   a warning).
enum ColourManagement {
    static func manage(_ decoder: RowDecoder, policy: ColourPolicy) throws -> (decoder: RowDecoder, warnings: [String])
    {
        var metadata = decoder.metadata
        let icc = metadata.icc
        var error = [CChar](repeating: 0, count: 256)
        if let cmyk = decoder as? CMYKRowDecoder, cmyk.isCMYK {
            // The output is RGB: a CMYK profile must not travel with it.
            metadata.icc = []
            let usable =
                !icc.isEmpty
                && icc.withUnsafeBufferPointer { bytes in
                    sw_icc_check(bytes.baseAddress, bytes.count, 4, &error, error.count) == SW_CODEC_OK
                }
            if usable, let inverted = cmyk.keepCMYK() {
                let transform = icc.withUnsafeBufferPointer { bytes in
                    sw_colour_to_srgb(bytes.baseAddress, bytes.count, 4, inverted ? 1 : 0, &error, error.count)
                }
                if let transform { return (ConvertingRowDecoder(cmyk, transform: transform, metadata: metadata), []) }
                // keepCMYK cannot be undone: without a transform the rows would stay CMYK (a wrong image).
                throw ImagingError(
                    .decode,
                    "cannot convert this CMYK \(cmyk.formatName) through its colour profile: \(CodecMessage.string(error))"
                )
            }
            let reason =
                icc.isEmpty
                ? "it has no colour profile" : "its colour profile is unusable (\(CodecMessage.string(error)))"
            return (
                MetadataOverride(decoder, metadata: metadata),
                [
                    "CMYK \(cmyk.formatName) converted to RGB without a profile because \(reason): the colours are approximate"
                ]
            )
        }
        guard !icc.isEmpty else { return (decoder, []) }
        let profileChannels = decoder.channels == 4 ? 3 : decoder.channels
        let valid = icc.withUnsafeBufferPointer { bytes in
            sw_icc_check(bytes.baseAddress, bytes.count, Int32(profileChannels), &error, error.count) == SW_CODEC_OK
        }
        guard valid else {
            metadata.icc = []
            return (
                MetadataOverride(decoder, metadata: metadata),
                ["ignored the embedded ICC profile: \(CodecMessage.string(error))"]
            )
        }
        guard policy == .srgb else { return (decoder, []) }
        guard decoder.channels == 3 else {
            return (
                decoder,
                [
                    "kept the ICC profile of a \(decoder.channels == 1 ? "gray" : "transparent") image: only RGB is converted to sRGB"
                ]
            )
        }
        let transform = icc.withUnsafeBufferPointer { bytes in
            decoder.bitsPerSample == 16
                ? sw_colour_to_srgb16(bytes.baseAddress, bytes.count, &error, error.count)
                : sw_colour_to_srgb(bytes.baseAddress, bytes.count, 3, 0, &error, error.count)
        }
        guard let transform else {
            metadata.icc = []
            return (
                MetadataOverride(decoder, metadata: metadata),
                ["ignored the embedded ICC profile: \(CodecMessage.string(error))"]
            )
        }
        metadata.icc = []
        return (ConvertingRowDecoder(decoder, transform: transform, metadata: metadata), [])
    }
}

/// A decoder's rows with other metadata (a profile dropped).
final class MetadataOverride: RowDecoder {
    private let source: RowDecoder
    let metadata: ImageMetadata
    var width: Int { source.width }
    var height: Int { source.height }
    var channels: Int { source.channels }
    var bitsPerSample: Int { source.bitsPerSample }
    var sourceBitsPerSample: Int { source.sourceBitsPerSample }

    init(_ source: RowDecoder, metadata: ImageMetadata) {
        self.source = source
        self.metadata = metadata
    }

    func read(into pixels: UnsafeMutablePointer<UInt8>, rows: Int, token: CancellationToken) throws {
        try source.read(into: pixels, rows: rows, token: token)
    }
}

/// A decoder's rows converted to sRGB RGB through a colour transform as they are decoded (RGB in place, at 8 or 16 bits;
/// CMYK through a buffer of its own).
final class ConvertingRowDecoder: RowDecoder {
    private let source: RowDecoder
    private let transform: OpaquePointer
    private var buffer: [UInt8] = []
    let metadata: ImageMetadata
    var width: Int { source.width }
    var height: Int { source.height }
    let channels = 3
    var bitsPerSample: Int { source.bitsPerSample }
    var sourceBitsPerSample: Int { source.sourceBitsPerSample }

    init(_ source: RowDecoder, transform: OpaquePointer, metadata: ImageMetadata) {
        self.source = source
        self.transform = transform
        self.metadata = metadata
    }

    deinit { sw_colour_free(transform) }

    func read(into pixels: UnsafeMutablePointer<UInt8>, rows: Int, token: CancellationToken) throws {
        let count = rows * width
        if source.channels == 3 {
            try source.read(into: pixels, rows: rows, token: token)
            sw_colour_apply(transform, pixels, pixels, count)
            return
        }
        if buffer.count < count * source.channels { buffer = [UInt8](repeating: 0, count: count * source.channels) }
        try buffer.withUnsafeMutableBufferPointer { input in
            guard let base = input.baseAddress else { return }
            try source.read(into: base, rows: rows, token: token)
            sw_colour_apply(transform, base, pixels, count)
        }
    }
}
