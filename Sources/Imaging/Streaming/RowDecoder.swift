import CImageCodecs

/// A decoder that hands out an image's rows top to bottom, 8 bits per channel (or 16, see `bitsPerSample`),
/// without holding the image.
protocol RowDecoder: AnyObject {
    /// 8, or 16 for a decoder asked to keep a 16-bit image's depth (samples are then host-order `UInt16`, 2 bytes
    /// each, and a row is `width * channels * 2` bytes).
    var bitsPerSample: Int { get }
    /// The depth stored in the file (10 or 12 for such an AVIF read at 16 bits); `bitsPerSample` unless told.
    var sourceBitsPerSample: Int { get }
    var width: Int { get }
    var height: Int { get }
    /// 1 (gray), 3 (RGB) or 4 (RGBA).
    var channels: Int { get }
    /// The metadata read with the header.
    var metadata: ImageMetadata { get }
    /// Decodes the next `rows` rows into `pixels` (`width * channels` bytes a row, no padding).
    func read(into pixels: UnsafeMutablePointer<UInt8>, rows: Int, token: CancellationToken) throws
}

extension RowDecoder {
    var bitsPerSample: Int { 8 }
    var sourceBitsPerSample: Int { bitsPerSample }
    /// Bytes of a decoded row.
    var rowBytes: Int { width * channels * bitsPerSample / 8 }

    /// Decodes every remaining row into a new image.
    func readImage(token: CancellationToken) throws -> ImageBuffer {
        try ImageBuffer(width: width, height: height, channels: channels) { pixels in
            guard let base = pixels.baseAddress else { return }
            try read(into: base, rows: height, token: token)
        }
    }
}

enum RowDecoders {
    /// Opens a decoder for `source` (JPEG, PNG, WebP, AVIF, HEIF, TIFF, GIF or BMP, recognised by its first bytes),
    /// after checking the image's size against `limits`, with `colour` applied (`ColourManagement`; its warnings are
    /// returned, and a warning when a TIFF's further pages, a GIF's further frames or a HEIF's further images were
    /// not read). JPEG, PNG, TIFF and BMP stream; a JPEG or TIFF whose orientation turns or flips it, an interlaced
    /// PNG, a WebP, AVIF, HEIF and GIF cannot: they are decoded whole (and turned) first, and their rows served from
    /// memory.
    ///
    /// With `keepDeep`, a 16-bit PNG or TIFF (gray, gray+alpha, RGB, RGBA) and a 10 or 12-bit AVIF keep their depth (16
    /// bits a sample, `bitsPerSample`; turned upright and converted to sRGB at 16 bits when their orientation and
    /// `colour` say so).
    static func open(
        _ source: ImageSource, limits: ImageLimits, colour: ColourPolicy = .keep, keepDeep: Bool = false,
        token: CancellationToken
    ) throws -> (decoder: RowDecoder, format: ImageFormat, warnings: [String]) {
        let format = try source.sniffFormat()
        switch format {
        case .jpeg:
            let jpeg = try JPEGRowDecoder(source, limits: limits)
            let (managed, warnings) = try ColourManagement.manage(jpeg, policy: colour)
            return (try upright(managed, orientation: jpeg.orientation, token: token), format, warnings)
        case .tiff:
            let tiff = try TIFFRowDecoder(source, limits: limits)
            if keepDeep { _ = tiff.keepDeep() }
            var (managed, warnings) = try ColourManagement.manage(tiff, policy: colour)
            if tiff.morePages > 0 {
                let pages = tiff.morePages + 1
                warnings.append("the TIFF has \(pages) pages: only the first was read")
            }
            return (try upright(managed, orientation: tiff.orientation, token: token), format, warnings)
        case .png:
            let png = try PNGRowDecoder(source, limits: limits, keepDeep: keepDeep)
            let streaming: RowDecoder
            if !png.interlaced {
                streaming = png
            } else if png.bitsPerSample == 16 {
                streaming = DeepBufferRowDecoder(png, rows: try png.readWholeRows(token: token))
            } else {
                streaming = BufferRowDecoder(try png.readWhole(token: token), metadata: png.metadata)
            }
            let (managed, warnings) = try ColourManagement.manage(streaming, policy: colour)
            return (managed, format, warnings)
        case .bmp:
            let (managed, warnings) = try ColourManagement.manage(
                try BMPRowDecoder(source, limits: limits), policy: colour)
            return (managed, format, warnings)
        case .avif where keepDeep:
            let whole = try WholePictureDecoder(format, source, limits: limits)
            guard whole.sourceBitDepth > 8 else {
                return try wholePicture(whole, format: format, colour: colour, token: token)
            }
            let deep = DeepBufferRowDecoder(
                width: whole.width, height: whole.height, channels: whole.channels,
                metadata: whole.metadata, sourceBits: whole.sourceBitDepth,
                rows: try whole.readDeepRows(token: token))
            let (managed, warnings) = try ColourManagement.manage(
                try upright(deep, orientation: whole.orientation, token: token),
                policy: colour)
            return (managed, format, warnings)
        case .webp, .avif, .heif, .gif:
            let whole = try WholePictureDecoder(format, source, limits: limits)
            return try wholePicture(whole, format: format, colour: colour, token: token)
        }
    }

    /// A picture decoded whole at 8 bits (WebP, AVIF, HEIF, GIF), turned by its orientation, with its warnings.
    private static func wholePicture(
        _ whole: WholePictureDecoder, format: ImageFormat, colour: ColourPolicy,
        token: CancellationToken
    ) throws -> (decoder: RowDecoder, format: ImageFormat, warnings: [String]) {
        let image = try whole.readImage(token: token).oriented(exifOrientation: whole.orientation)
        var (managed, warnings) = try ColourManagement.manage(
            BufferRowDecoder(image, metadata: whole.metadata), policy: colour)
        if whole.moreFrames > 0 {
            warnings.append(
                format == .gif
                    ? "the GIF is animated: only its first frame was read"
                    : "the HEIF holds \(whole.moreFrames + 1) images: only its primary image was read")
        }
        return (managed, format, warnings)
    }

    /// `decoder`'s rows turned upright by an EXIF/TIFF `orientation` (decoded whole first), or `decoder` itself at 1.
    private static func upright(_ decoder: RowDecoder, orientation: Int, token: CancellationToken) throws -> RowDecoder
    {
        if orientation == 1 { return decoder }
        if decoder.bitsPerSample == 16 {
            return try DeepBufferRowDecoder.upright(decoder, orientation: orientation, token: token)
        }
        let image = try decoder.readImage(token: token).oriented(exifOrientation: orientation)
        return BufferRowDecoder(image, metadata: decoder.metadata)
    }
}

/// The rows of an image already in memory.
final class BufferRowDecoder: RowDecoder {
    let image: ImageBuffer
    let metadata: ImageMetadata
    private var next = 0
    var width: Int { image.width }
    var height: Int { image.height }
    var channels: Int { image.channels }

    init(_ image: ImageBuffer, metadata: ImageMetadata = .none) {
        self.image = image
        self.metadata = metadata
    }

    func read(into pixels: UnsafeMutablePointer<UInt8>, rows: Int, token: CancellationToken) throws {
        try token.check()
        let rowBytes = image.rowBytes
        image.pixels.withUnsafeBufferPointer { source in
            guard let base = source.baseAddress else { return }
            pixels.update(from: base + next * rowBytes, count: rows * rowBytes)
        }
        next += rows
    }
}
