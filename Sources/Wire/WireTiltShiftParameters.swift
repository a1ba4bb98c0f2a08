/// The parameters of the tilt-shift filter (the proto's `TiltShiftParameters`): sent by a client in
/// ``SubmitBatch`` and passed on by the coordinator in each tilt-shift ``TaskAssignment``.
public struct WireTiltShiftParameters: Sendable, Equatable {
    /// The focus line, as a fraction of the height from the top, 0...1.
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
        stripMetadata: Bool = false
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
    }
}
