import CImageCodecs

/// A decoder that hands out an image's rows top to bottom, 8 bits per channel, without holding the image.
protocol RowDecoder: AnyObject {
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
    /// Decodes every remaining row into a new image.
    func readImage(token: CancellationToken) throws -> ImageBuffer {
        try ImageBuffer(width: width, height: height, channels: channels) { pixels in
            guard let base = pixels.baseAddress else { return }
            try read(into: base, rows: height, token: token)
        }
    }
}

enum RowDecoders {
    /// Opens a decoder for `source` (JPEG, PNG, WebP or AVIF, recognised by its first bytes), after checking the
    /// image's size against `limits`, with `colour` applied (`ColourManagement`; its warnings are returned). A JPEG
    /// whose EXIF orientation turns or flips it, an interlaced PNG, a WebP and an AVIF cannot stream: they are
    /// decoded whole (and turned) first, and their rows served from memory.
    static func open(_ source: ImageSource, limits: ImageLimits, colour: ColourPolicy = .keep, token: CancellationToken) throws
        -> (decoder: RowDecoder, format: ImageFormat, warnings: [String]) {
        let format = try source.sniffFormat()
        switch format {
        case .jpeg:
            let jpeg = try JPEGRowDecoder(source, limits: limits)
            let (managed, warnings) = try ColourManagement.manage(jpeg, policy: colour)
            if jpeg.orientation == 1 { return (managed, format, warnings) }
            let image = try managed.readImage(token: token).oriented(exifOrientation: jpeg.orientation)
            return (BufferRowDecoder(image, metadata: managed.metadata), format, warnings)
        case .png:
            let png = try PNGRowDecoder(source, limits: limits)
            let streaming: RowDecoder = png.interlaced
                ? BufferRowDecoder(try png.readWhole(token: token), metadata: png.metadata) : png
            let (managed, warnings) = try ColourManagement.manage(streaming, policy: colour)
            return (managed, format, warnings)
        case .webp, .avif:
            let whole = try WholePictureDecoder(format, source, limits: limits)
            let image = try whole.readImage(token: token).oriented(exifOrientation: whole.orientation)
            let (managed, warnings) = try ColourManagement.manage(BufferRowDecoder(image, metadata: whole.metadata), policy: colour)
            return (managed, format, warnings)
        }
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
