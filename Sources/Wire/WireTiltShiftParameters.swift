/// The parameters of the tilt-shift filter (the proto's `TiltShiftParameters`): sent by a client in
/// ``SubmitBatch`` and passed on by the coordinator in each tilt-shift ``TaskAssignment``.
public struct WireTiltShiftParameters: Sendable, Equatable {
    /// The focus line, as a fraction of the height from the top (of the extent across the line when it is
    /// turned), 0...1.
    public var focusPosition: Float
    /// The height of the sharp band, as a fraction of the height.
    public var sharpBand: Float
    /// The height of the sharp-to-blurred ramp, as a fraction of the height.
    public var transition: Float
    /// The Gaussian sigma, in pixels.
    public var blurRadius: Float
    /// The format of the output file.
    public var outputFormat: WireImageFormat
    /// The JPEG quality, 1...100; 0 means the default.
    public var jpegQuality: UInt32
    /// The WebP quality, 1...100; 0 means the default.
    public var webpQuality: UInt32
    /// The AVIF quality, 1...100; 0 means the default.
    public var avifQuality: UInt32
    /// Whether profiled RGB is converted to sRGB (false: the pixels keep their ICC profile).
    public var colourSRGB: Bool
    /// Whether the output keeps only the ICC profile of the input's metadata (false: EXIF, XMP, IPTC too).
    public var stripMetadata: Bool
    /// The focus line's angle in degrees, counter-clockwise (0: horizontal). Checked (finite, -360...360) where
    /// the worker takes it, by the filter's validation.
    public var angle: Float
    /// How the blur grows away from the sharp band.
    public var falloff: WireFalloff

    /// Creates tilt-shift parameters. The geometry has no defaults here: the Imaging layer owns the
    /// recipe; the output is by default in the input's format at the default qualities, its colours and
    /// metadata kept.
    public init(
        focusPosition: Float,
        sharpBand: Float,
        transition: Float,
        blurRadius: Float,
        outputFormat: WireImageFormat = .sameAsInput,
        jpegQuality: UInt32 = 0,
        webpQuality: UInt32 = 0,
        avifQuality: UInt32 = 0,
        colourSRGB: Bool = false,
        stripMetadata: Bool = false,
        angle: Float = 0,
        falloff: WireFalloff = .blend
    ) {
        self.focusPosition = focusPosition
        self.sharpBand = sharpBand
        self.transition = transition
        self.blurRadius = blurRadius
        self.outputFormat = outputFormat
        self.jpegQuality = jpegQuality
        self.webpQuality = webpQuality
        self.avifQuality = avifQuality
        self.colourSRGB = colourSRGB
        self.stripMetadata = stripMetadata
        self.angle = angle
        self.falloff = falloff
    }
}

/// How the tilt-shift's mask becomes blur (the proto's `Falloff`).
public enum WireFalloff: UInt32, Sendable, Equatable, CaseIterable {
    /// One blur blended over the original by the mask (Core Image's recipe).
    case blend = 0
    /// The blur grows with the mask, up to the blur radius.
    case progressive = 1
}
