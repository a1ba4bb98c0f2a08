import CImageCodecs

/// WebP (libwebp), AVIF (libavif), HEIF (libheif) or GIF (giflib) input: the header is read (and the size checked
/// against the limits) when it opens, then the whole picture is decoded at once (none of these libraries hands out
/// rows of a still image as it goes in a way worth streaming: an AV1 or HEVC frame is decoded whole, a WebP is
/// small beside its pixels, and a GIF frame may be interlaced). The pixels then stream to the filter from memory,
/// so an input takes `width × height × 3` bytes (4 with alpha), bounded by `ImageLimits.maxPixels` (HEIF: twice
/// that for a moment, libheif's picture and ours). Animated WebP and AVIF are refused; a GIF's first frame and a
/// HEIF's primary image are read (`moreFrames` says when there was more). EXIF orientation: WebP's is applied like
/// JPEG's; AVIF's own transforms (irot/imir) are not applied; HEIF's are, by libheif.
final class WholePictureDecoder {
    private enum Decoder {
        case webp(OpaquePointer)
        case avif(OpaquePointer)
        case heif(OpaquePointer)
        case gif(OpaquePointer)
    }

    /// One format's C functions: what `init` opens it with.
    private struct Codec {
        typealias Open = (
            UnsafePointer<UInt8>, Int, UnsafeMutablePointer<sw_image_info>, UnsafeMutablePointer<CChar>, Int
        ) -> OpaquePointer?
        /// As `Open`, from a file, reading at most the `Int` bytes after it.
        typealias OpenFile = (
            UnsafeMutablePointer<FILE>, Int, UnsafeMutablePointer<sw_image_info>, UnsafeMutablePointer<CChar>, Int
        ) -> OpaquePointer?
        typealias Metadata = (OpaquePointer, UnsafeMutablePointer<sw_image_metadata>) -> Void

        let name: String
        let decoder: (OpaquePointer) -> Decoder
        let open: Open
        let openFile: OpenFile
        let metadata: Metadata

        init(
            _ name: String, _ decoder: @escaping (OpaquePointer) -> Decoder, _ open: @escaping Open,
            _ openFile: @escaping OpenFile, _ metadata: @escaping Metadata
        ) {
            self.name = name
            self.decoder = decoder
            self.open = open
            self.openFile = openFile
            self.metadata = metadata
        }
    }

    let width: Int
    let height: Int
    let channels: Int
    let orientation: Int
    let metadata: ImageMetadata
    /// Bits a sample as stored (AVIF: 8, 10 or 12).
    let sourceBitDepth: Int
    /// Further images in the file that are not read (HEIF's other top-level images; a GIF's frames after the
    /// first, known once `readImage` ran: 1 when there are any).
    private(set) var moreFrames: Int
    private let decoder: Decoder
    private let name: String
    private var message = [CChar](repeating: 0, count: 512)

    /// Reads the header of `format` (`.webp`, `.avif`, `.heif` or `.gif`) from `source` (which must outlive the decoder) and checks
    /// the size against `limits`.
    init(_ format: ImageFormat, _ source: ImageSource, limits: ImageLimits) throws {
        let codec: Codec
        switch format {
        case .webp: codec = Codec("WebP", Decoder.webp, sw_webp_open, sw_webp_open_file, sw_webp_metadata)
        case .avif: codec = Codec("AVIF", Decoder.avif, sw_avif_open, sw_avif_open_file, sw_avif_metadata)
        case .heif: codec = Codec("HEIF", Decoder.heif, sw_heif_open, sw_heif_open_file, sw_heif_metadata)
        case .gif: codec = Codec("GIF", Decoder.gif, sw_gif_open, sw_gif_open_file, sw_gif_metadata)
        case .jpeg, .png, .tiff, .bmp:
            throw ImagingError(.decode, "\(format.rawValue) is decoded row by row, not as a whole picture")
        }
        let maxBytes = limits.maxBytes
        name = codec.name
        let opened = try source.openDecoder(
            name, limits: limits, memory: codec.open, file: { codec.openFile($0, maxBytes, $1, $2, $3) },
            metadata: codec.metadata)
        decoder = codec.decoder(opened.handle)
        (width, height, channels, orientation, metadata) = (
            opened.width, opened.height, opened.channels, opened.orientation, opened.metadata
        )
        moreFrames = Int(opened.info.more_frames)
        sourceBitDepth = Int(opened.info.source_bit_depth)
        try limits.checkPixels(width: width, height: height)
    }

    deinit {
        switch decoder {
        case .webp(let d): sw_webp_close(d)
        case .avif(let d): sw_avif_close(d)
        case .heif(let d): sw_heif_close(d)
        case .gif(let d): sw_gif_close(d)
        }
    }

    /// Decodes a 10 or 12-bit AVIF at 16 bits (host-order `UInt16` samples, 0…65535), as stored (not turned):
    /// `width × channels × 2 × height` bytes.
    func readDeepRows(token: CancellationToken) throws -> [UInt8] {
        guard case .avif(let d) = decoder else { throw ImagingError(.decode, "only AVIF is read at 16 bits here") }
        let stride = width * channels * 2
        return try [UInt8](unsafeUninitializedCapacity: stride * height) { buffer, count in
            guard let base = buffer.baseAddress else { return }
            let status = token.withCodecCallback { cancel in
                sw_avif_read16(d, base, stride, cancel, &message, message.count)
            }
            try CodecStatus.check(status, .decode, "cannot read \(name)", message: message)
            count = stride * height
        }
    }

    /// Decodes the picture, as stored (not turned).
    func readImage(token: CancellationToken) throws -> ImageBuffer {
        try ImageBuffer(width: width, height: height, channels: channels) { pixels in
            guard let base = pixels.baseAddress else { return }
            let stride = width * channels
            let status = token.withCodecCallback { cancel in
                switch decoder {
                case .webp(let d): sw_webp_read(d, base, stride, cancel, &message, message.count)
                case .avif(let d): sw_avif_read(d, base, stride, cancel, &message, message.count)
                case .heif(let d): sw_heif_read(d, base, stride, cancel, &message, message.count)
                case .gif(let d): sw_gif_read(d, base, stride, cancel, &message, message.count)
                }
            }
            try CodecStatus.check(status, .decode, "cannot read \(name)", message: message)
            if case .gif(let d) = decoder { moreFrames = Int(sw_gif_more_frames(d)) }
        }
    }
}
