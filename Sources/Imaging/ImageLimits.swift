/// Limits that protect a process from hostile or accidental input: decompression bombs (a few KB that
/// decode to gigabytes of pixels) and oversized downloads.
public struct ImageLimits: Sendable, Equatable {
    /// The largest decoded image, in pixels (width × height). Default: 150 megapixels (≈ 600 MB as RGBA).
    public var maxPixels: Int
    /// The largest encoded image, in bytes. Default: 100 MiB.
    public var maxBytes: Int

    public init(maxPixels: Int = 150_000_000, maxBytes: Int = 100 * 1024 * 1024) {
        self.maxPixels = maxPixels
        self.maxBytes = maxBytes
    }

    /// 150 megapixels, 100 MiB.
    public static let `default` = ImageLimits()

    func checkPixels(width: Int, height: Int) throws {
        let (pixels, overflow) = width.multipliedReportingOverflow(by: height)
        if overflow || pixels > maxPixels {
            throw ImagingError(
                .limit,
                "image is \(width)×\(height) (\(Self.megapixels(overflow ? Int.max : pixels)) megapixels), over the limit of "
                    + "\(Self.megapixels(maxPixels)) megapixels (a possible decompression bomb); raise it with --max-megapixels "
                    + "or ImageLimits.maxPixels if the image is genuine"
            )
        }
    }

    func checkBytes(_ count: Int, source: String? = nil) throws {
        if count > maxBytes {
            let prefix = source.map { "\($0): " } ?? ""
            throw ImagingError(
                .limit,
                "\(prefix)image data is \(Self.mebibytes(count)) MiB, over the limit of \(Self.mebibytes(maxBytes)) MiB; "
                    + "raise it with --max-bytes or ImageLimits.maxBytes / FetchConfiguration.maxBytes"
            )
        }
    }

    static func megapixels(_ pixels: Int) -> String { compact(Double(pixels) / 1_000_000) }

    package static func mebibytes(_ bytes: Int) -> String { compact(Double(bytes) / 1_048_576) }

    /// 1234 → "1234", 12.345 → "12.35", 0.004 → "0.004" (at most three significant decimals, no trailing zeros).
    static func compact(_ value: Double) -> String {
        if value >= 100 || value == value.rounded() { return String(Int(value.rounded())) }
        let decimals = value >= 1 ? 2 : 3
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        var text = String((value * scale).rounded() / scale)
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text
    }
}
