/// The file format of a tilt-shift output (the proto's `ImageFormat`, renamed so that it does not clash
/// with Imaging's `ImageFormat`).
public enum WireImageFormat: UInt32, Sendable, Equatable, CaseIterable {
    /// Write the output in the format of the input.
    case sameAsInput = 0
    /// JPEG.
    case jpeg = 1
    /// PNG.
    case png = 2
    /// WebP (lossy).
    case webp = 140
    /// AVIF.
    case avif = 141
    /// TIFF (Deflate).
    case tiff = 142
}
