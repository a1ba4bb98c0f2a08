import CImageCodecs

/// What an output keeps of its input's metadata (`EncodingOptions.metadata`).
public enum MetadataPolicy: String, Sendable, CaseIterable {
    /// The ICC profile, EXIF (with its orientation reset to 1: the pixels are written upright), XMP and IPTC.
    case keep
    /// The ICC profile only (without it the colours would change).
    case strip
}

/// Metadata carried from a decoded input into its encoded output: the ICC colour profile (JPEG APP2, PNG
/// iCCP), EXIF (JPEG APP1, PNG eXIf), XMP (JPEG APP1) and IPTC (JPEG APP13). Only the bytes are carried;
/// none of them changes the pixels (a profile is not applied: it travels with the pixels it describes).
struct ImageMetadata: Sendable, Equatable {
    var icc: [UInt8] = []
    /// The TIFF structure of the EXIF data.
    var exif: [UInt8] = []
    var xmp: [UInt8] = []
    var iptc: [UInt8] = []

    static let none = ImageMetadata()

    /// Copies the parts of a C decoder's metadata.
    init(_ c: sw_image_metadata) {
        func bytes(_ pointer: UnsafePointer<UInt8>?, _ size: Int) -> [UInt8] {
            guard let pointer, size > 0 else { return [] }
            return Array(UnsafeBufferPointer(start: pointer, count: size))
        }
        icc = bytes(c.icc, c.icc_size)
        exif = bytes(c.exif, c.exif_size)
        xmp = bytes(c.xmp, c.xmp_size)
        iptc = bytes(c.iptc, c.iptc_size)
    }

    init() {}

    /// What `policy` keeps of it.
    func applying(_ policy: MetadataPolicy) -> ImageMetadata {
        switch policy {
        case .keep: self
        case .strip: ImageMetadata(icc: icc)
        }
    }

    private init(icc: [UInt8]) { self.icc = icc }

    /// Runs `body` with the C form (valid during `body`; nil when there is nothing to carry).
    func withUnsafeMetadata<Result>(_ body: (UnsafePointer<sw_image_metadata>?) throws -> Result) rethrows -> Result {
        if self == .none { return try body(nil) }
        return try icc.withUnsafeBufferPointer { icc in
            try exif.withUnsafeBufferPointer { exif in
                try xmp.withUnsafeBufferPointer { xmp in
                    try iptc.withUnsafeBufferPointer { iptc in
                        var c = sw_image_metadata(
                            icc: icc.baseAddress, icc_size: icc.count, exif: exif.baseAddress, exif_size: exif.count,
                            xmp: xmp.baseAddress, xmp_size: xmp.count, iptc: iptc.baseAddress, iptc_size: iptc.count)
                        return try withUnsafePointer(to: &c) { try body($0) }
                    }
                }
            }
        }
    }
}
