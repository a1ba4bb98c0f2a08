/// Decoded 8-bit pixels, rows top to bottom, channels interleaved, no padding between rows.
///
/// `channels` is 1 (gray), 3 (RGB) or 4 (RGBA, straight — not premultiplied — alpha).
public struct ImageBuffer: Sendable, Equatable {
    public let width: Int
    public let height: Int
    public let channels: Int
    /// `width * height * channels` bytes.
    public var pixels: [UInt8]

    /// Bytes per row.
    public var rowBytes: Int { width * channels }

    /// An image of the given size filled with `value`.
    public init(width: Int, height: Int, channels: Int, filledWith value: UInt8 = 0) {
        precondition(width > 0 && height > 0 && [1, 3, 4].contains(channels), "invalid image geometry")
        self.width = width
        self.height = height
        self.channels = channels
        self.pixels = [UInt8](repeating: value, count: width * height * channels)
    }

    /// Wraps existing pixels; throws when the byte count does not match the geometry.
    public init(width: Int, height: Int, channels: Int, pixels: [UInt8]) throws {
        guard width > 0, height > 0, [1, 3, 4].contains(channels) else {
            throw ImagingError(
                .processing, "invalid image geometry \(width)×\(height)×\(channels): channels must be 1, 3 or 4")
        }
        guard pixels.count == width * height * channels else {
            throw ImagingError(.processing, "\(pixels.count) bytes do not make a \(width)×\(height)×\(channels) image")
        }
        self.width = width
        self.height = height
        self.channels = channels
        self.pixels = pixels
    }

    /// Builds an image by calling `body` with its uninitialised pixel memory (`width * height * channels` bytes).
    init(
        width: Int, height: Int, channels: Int,
        initializingWith body: (UnsafeMutableBufferPointer<UInt8>) throws -> Void
    ) rethrows {
        self.width = width
        self.height = height
        self.channels = channels
        self.pixels = try [UInt8](unsafeUninitializedCapacity: width * height * channels) { buffer, count in
            try body(buffer)
            count = buffer.count
        }
    }

    /// The value of channel `channel` of pixel (`x`, `y`).
    public subscript(x: Int, y: Int, channel: Int) -> UInt8 {
        get { pixels[(y * width + x) * channels + channel] }
        set { pixels[(y * width + x) * channels + channel] = newValue }
    }

    /// Whether any pixel is not fully opaque (false for images without alpha).
    public var hasTransparency: Bool {
        guard channels == 4 else { return false }
        return pixels.withUnsafeBufferPointer { p in
            var index = 3
            while index < p.count {
                if p[index] != 255 { return true }
                index += 4
            }
            return false
        }
    }

    /// The same image with `channels` channels: gray ↔ RGB, dropping alpha by compositing over `background`.
    public func converted(toChannels target: Int, background: UInt8 = 255) -> ImageBuffer {
        if target == channels { return self }
        precondition([1, 3, 4].contains(target), "channels must be 1, 3 or 4")
        let source = channels
        return pixels.withUnsafeBufferPointer { src in
            ImageBuffer(width: width, height: height, channels: target) { dst in
                let count = width * height
                let bg = Int(background)
                for i in 0..<count {
                    var r: Int
                    var g: Int
                    var b: Int
                    var a = 255
                    switch source {
                    case 1:
                        r = Int(src[i])
                        g = r
                        b = r
                    case 3:
                        r = Int(src[3 * i])
                        g = Int(src[3 * i + 1])
                        b = Int(src[3 * i + 2])
                    default:
                        r = Int(src[4 * i])
                        g = Int(src[4 * i + 1])
                        b = Int(src[4 * i + 2])
                        a = Int(src[4 * i + 3])
                        if target != 4 {
                            r = (r * a + bg * (255 - a) + 127) / 255
                            g = (g * a + bg * (255 - a) + 127) / 255
                            b = (b * a + bg * (255 - a) + 127) / 255
                        }
                    }
                    switch target {
                    case 1:
                        // ITU-R BT.601 luma, as libjpeg computes it.
                        dst[i] = UInt8((19595 * r + 38470 * g + 7471 * b + 32768) >> 16)
                    case 3:
                        dst[3 * i] = UInt8(r)
                        dst[3 * i + 1] = UInt8(g)
                        dst[3 * i + 2] = UInt8(b)
                    default:
                        dst[4 * i] = UInt8(r)
                        dst[4 * i + 1] = UInt8(g)
                        dst[4 * i + 2] = UInt8(b)
                        dst[4 * i + 3] = UInt8(a)
                    }
                }
            }
        }
    }

    /// Applies an EXIF orientation (1…8) so that the result is upright; 1 returns the image unchanged.
    public func oriented(exifOrientation orientation: Int) -> ImageBuffer {
        guard (2...8).contains(orientation) else { return self }
        let w = width
        let h = height
        let c = channels
        // Orientations 5…8 swap the axes.
        let swaps = orientation >= 5
        let outW = swaps ? h : w
        let outH = swaps ? w : h
        return pixels.withUnsafeBufferPointer { src in
            ImageBuffer(width: outW, height: outH, channels: c) { dst in
                for y in 0..<outH {
                    for x in 0..<outW {
                        // (sx, sy): the source pixel shown at (x, y) in the upright image.
                        let sx: Int
                        let sy: Int
                        switch orientation {
                        case 2:
                            sx = w - 1 - x
                            sy = y  // mirrored horizontally
                        case 3:
                            sx = w - 1 - x
                            sy = h - 1 - y  // rotated 180°
                        case 4:
                            sx = x
                            sy = h - 1 - y  // mirrored vertically
                        case 5:
                            sx = y
                            sy = x  // transposed
                        case 6:
                            sx = y
                            sy = h - 1 - x  // rotate 90° clockwise to view
                        case 7:
                            sx = w - 1 - y
                            sy = h - 1 - x  // transversed
                        default:
                            sx = w - 1 - y
                            sy = x  // 8: rotate 90° counter-clockwise to view
                        }
                        let s = (sy * w + sx) * c
                        let d = (y * outW + x) * c
                        for k in 0..<c { dst[d + k] = src[s + k] }
                    }
                }
            }
        }
    }
}
