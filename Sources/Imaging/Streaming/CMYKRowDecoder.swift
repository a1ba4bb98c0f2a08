/// A decoder of an image that may be CMYK (a JPEG, a TIFF): it hands out RGB converted naively unless asked, before
/// its first row, for the CMYK rows themselves, which `ColourManagement` then converts through the image's profile.
protocol CMYKRowDecoder: RowDecoder {
    /// The format's name in messages ("JPEG", "TIFF").
    var formatName: String { get }
    /// Whether the image is CMYK (or YCCK).
    var isCMYK: Bool { get }
    /// Makes the decoder (before any row is read) hand out its CMYK rows as stored, 4 bytes a pixel; returns whether
    /// they are Adobe's inverted CMYK, nil when the image is not CMYK or cannot hand them out.
    func keepCMYK() -> Bool?
}
