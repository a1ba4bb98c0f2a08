/// The tilt-shift recipe: a Gaussian blur blended over the original through a mask that is 0 on the focus
/// line (and within the sharp band around it) and rises linearly to 1 over `transition`.
///
/// With the defaults this is Core Image's recipe: blur radius 10, mask 0 at mid-height, 1 at the top and
/// bottom quarters: m(y) = clamp(4·|y/h − 0.5|, 0, 1). `angle` turns the focus line (counter-clockwise, about
/// the image's centre); `falloff` chooses how the mask becomes blur (`TiltShiftFalloff`).
public struct TiltShiftParameters: Sendable, Equatable {
    /// The focus line, as a fraction of the image's extent across the line (its height when the line is
    /// horizontal) from the top (0…1). Default 0.5.
    public var focusPosition: Double
    /// The extent kept fully sharp around the focus line, as a fraction of the image's extent across the line
    /// (0…1). Default 0.
    public var sharpBand: Double
    /// The extent over which the mask rises from 0 to 1, as a fraction of the image's extent across the line
    /// (0…1; 0 gives a hard edge). Default 0.25.
    public var transition: Double
    /// The Gaussian's standard deviation σ, in pixels (0 for no blur, else 0.5…500). Default 10.
    public var blurRadius: Double
    /// The focus line's angle in degrees, counter-clockwise (−360…360): 0 is horizontal, 90 vertical (then
    /// `focusPosition` runs from the left edge). Default 0.
    public var angle: Double
    /// How the blur grows away from the sharp band. Default `.blend`.
    public var falloff: TiltShiftFalloff

    public init(
        focusPosition: Double = 0.5, sharpBand: Double = 0, transition: Double = 0.25, blurRadius: Double = 10,
        angle: Double = 0, falloff: TiltShiftFalloff = .blend
    ) {
        self.focusPosition = focusPosition
        self.sharpBand = sharpBand
        self.transition = transition
        self.blurRadius = blurRadius
        self.angle = angle
        self.falloff = falloff
    }

    /// Core Image's recipe (the defaults).
    public static let coreImage = TiltShiftParameters()

    /// The largest accepted blur radius.
    public static let maxBlurRadius = 500.0

    /// The accepted angles, in degrees.
    public static let angleRange = -360.0...360.0

    /// Returns the parameters unchanged if every value is in range, or throws an `ImagingError` of kind
    /// `.processing` that names the bad value and its range.
    public func validated() throws -> TiltShiftParameters {
        func check(_ value: Double, _ name: String, _ range: ClosedRange<Double>) throws {
            guard value.isFinite, range.contains(value) else {
                throw ImagingError(
                    .processing, "\(name) must be between \(range.lowerBound) and \(range.upperBound) (got \(value))")
            }
        }
        try check(focusPosition, "focus position", 0...1)
        try check(sharpBand, "sharp band", 0...1)
        try check(transition, "transition", 0...1)
        guard blurRadius.isFinite, blurRadius == 0 || (0.5...Self.maxBlurRadius).contains(blurRadius) else {
            throw ImagingError(
                .processing,
                "blur radius must be 0 (no blur) or between 0.5 and \(Self.maxBlurRadius) pixels (got \(blurRadius))")
        }
        try check(angle, "angle (degrees)", Self.angleRange)
        return self
    }
}

/// How to encode the result.
public struct EncodingOptions: Sendable, Equatable {
    /// The output format; nil keeps the input's format (``ImageFormat/defaultOutput``: JPEG for HEIF, GIF and BMP
    /// inputs, which are only read).
    public var format: ImageFormat?
    /// JPEG quality, 1…100. Default 90 (`defaultJPEGQuality`).
    public var jpegQuality: Int
    /// WebP quality (libwebp's, lossy), 1…100. Default 80 (`defaultWebPQuality`).
    public var webpQuality: Int
    /// AVIF quality, 1…100, mapped to AV1's quantizer 63…0 as libavif 1.0 maps its own. Default 60
    /// (`defaultAVIFQuality`).
    public var avifQuality: Int
    /// zlib level for PNG output, 0…9. Default `PNGCodec.defaultCompressionLevel` (3).
    public var pngCompressionLevel: Int
    /// What the output keeps of the input's metadata. Default `.keep`: the ICC profile, EXIF (orientation
    /// reset to 1), XMP and IPTC; `.strip` keeps only the ICC profile.
    public var metadata: MetadataPolicy
    /// What happens to the input's colours. Default `.keep`: the pixels as they are, with their ICC profile;
    /// `.srgb` converts profiled RGB to sRGB. CMYK JPEGs are converted to sRGB through their profile either way.
    public var colour: ColourPolicy

    /// The default JPEG quality: 90.
    public static let defaultJPEGQuality = 90
    /// The default WebP quality: 80 (cwebp's is 75; 80 keeps the blur's gradients free of banding).
    public static let defaultWebPQuality = 80
    /// The default AVIF quality: 60 (libavif 1.0's own default; AV1's quantizer 25).
    public static let defaultAVIFQuality = 60

    public init(
        format: ImageFormat? = nil, jpegQuality: Int = defaultJPEGQuality, webpQuality: Int = defaultWebPQuality,
        avifQuality: Int = defaultAVIFQuality, pngCompressionLevel: Int = PNGCodec.defaultCompressionLevel,
        metadata: MetadataPolicy = .keep, colour: ColourPolicy = .keep
    ) {
        self.format = format
        self.jpegQuality = jpegQuality
        self.webpQuality = webpQuality
        self.avifQuality = avifQuality
        self.pngCompressionLevel = pngCompressionLevel
        self.metadata = metadata
        self.colour = colour
    }

    /// The quality used when writing `format` (PNG, which is lossless, has none: its compression level instead; TIFF,
    /// lossless too, and the formats not written: 0).
    public func quality(for format: ImageFormat) -> Int {
        switch format {
        case .jpeg: jpegQuality
        case .webp: webpQuality
        case .avif: avifQuality
        case .png: pngCompressionLevel
        case .tiff, .heif, .gif, .bmp: 0
        }
    }

    /// Sets the quality of every lossy format (for a `--quality` given without knowing which one will be written).
    public mutating func setLossyQuality(_ quality: Int) {
        (jpegQuality, webpQuality, avifQuality) = (quality, quality, quality)
    }

    /// Throws an `ImagingError` of kind `.processing` for an out-of-range quality or level, or an output format that
    /// is only read (HEIF, GIF, BMP).
    public func validated() throws -> EncodingOptions {
        if let format, !format.isWritable { throw ImagingError.notWritable(format) }
        for (name, quality) in [("JPEG", jpegQuality), ("WebP", webpQuality), ("AVIF", avifQuality)]
        where !(1...100).contains(quality) {
            throw ImagingError(.processing, "\(name) quality must be between 1 and 100 (got \(quality))")
        }
        guard (0...9).contains(pngCompressionLevel) else {
            throw ImagingError(
                .processing, "PNG compression level must be between 0 and 9 (got \(pngCompressionLevel))")
        }
        return self
    }
}
