import Imaging
import Wire

extension WireTiltShiftParameters {
    /// The wire form of the filter and encoding settings of a batch.
    public init(_ parameters: TiltShiftParameters, encoding: EncodingOptions) {
        self.init(
            focusPosition: Float(parameters.focusPosition),
            sharpBand: Float(parameters.sharpBand),
            transition: Float(parameters.transition),
            blurRadius: Float(parameters.blurRadius),
            outputFormat: WireImageFormat(encoding.format),
            jpegQuality: UInt32(clamping: encoding.jpegQuality))
    }

    /// The filter settings these wire parameters describe.
    var filterParameters: TiltShiftParameters {
        TiltShiftParameters(
            focusPosition: Double(focusPosition),
            sharpBand: Double(sharpBand),
            transition: Double(transition),
            blurRadius: Double(blurRadius))
    }

    /// The encoding settings these wire parameters describe (quality 0 means the default).
    var encodingOptions: EncodingOptions {
        var options = EncodingOptions(format: outputFormat.imageFormat)
        if jpegQuality > 0 { options.jpegQuality = Int(jpegQuality) }
        return options
    }
}

extension WireImageFormat {
    init(_ format: ImageFormat?) {
        switch format {
        case nil: self = .sameAsInput
        case .jpeg?: self = .jpeg
        case .png?: self = .png
        }
    }

    var imageFormat: ImageFormat? {
        switch self {
        case .sameAsInput: nil
        case .jpeg: .jpeg
        case .png: .png
        }
    }
}
