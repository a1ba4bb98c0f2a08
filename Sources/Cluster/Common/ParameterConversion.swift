import Imaging
import Wire

extension WireTiltShiftParameters {
    /// The wire form of the filter and encoding settings of a batch.
    public init(_ parameters: TiltShiftParameters, encoding: EncodingOptions) {
        let falloff: WireFalloff = parameters.falloff == .progressive ? .progressive : .blend
        self.init(
            focusPosition: Float(parameters.focusPosition),
            sharpBand: Float(parameters.sharpBand),
            transition: Float(parameters.transition),
            blurRadius: Float(parameters.blurRadius),
            outputFormat: WireImageFormat(encoding.format),
            jpegQuality: UInt32(clamping: encoding.jpegQuality),
            webpQuality: UInt32(clamping: encoding.webpQuality),
            avifQuality: UInt32(clamping: encoding.avifQuality),
            colourSRGB: encoding.colour == .srgb,
            stripMetadata: encoding.metadata == .strip,
            angle: Float(parameters.angle),
            falloff: falloff)
    }

    /// The filter settings these wire parameters describe.
    var filterParameters: TiltShiftParameters {
        let falloff: TiltShiftFalloff = self.falloff == .progressive ? .progressive : .blend
        return TiltShiftParameters(
            focusPosition: Double(focusPosition),
            sharpBand: Double(sharpBand),
            transition: Double(transition),
            blurRadius: Double(blurRadius),
            angle: Double(angle),
            falloff: falloff)
    }

    /// The encoding settings these wire parameters describe (quality 0 means the format's default).
    var encodingOptions: EncodingOptions {
        var options = EncodingOptions(
            format: outputFormat.imageFormat, metadata: stripMetadata ? .strip : .keep,
            colour: colourSRGB ? .srgb : .keep)
        if jpegQuality > 0 { options.jpegQuality = Int(jpegQuality) }
        if webpQuality > 0 { options.webpQuality = Int(webpQuality) }
        if avifQuality > 0 { options.avifQuality = Int(avifQuality) }
        return options
    }
}

extension WireImageFormat {
    init(_ format: ImageFormat?) {
        switch format {
        case nil: self = .sameAsInput
        case .jpeg?: self = .jpeg
        case .png?: self = .png
        case .webp?: self = .webp
        case .avif?: self = .avif
        case .tiff?: self = .tiff
        // Formats only read never reach here (EncodingOptions.validated refuses them); JPEG is what they default to.
        case .heif?, .gif?, .bmp?: self = .jpeg
        }
    }

    var imageFormat: ImageFormat? {
        switch self {
        case .sameAsInput: nil
        case .jpeg: .jpeg
        case .png: .png
        case .webp: .webp
        case .avif: .avif
        case .tiff: .tiff
        }
    }
}
