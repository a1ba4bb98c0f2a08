import ArgumentParser
import Imaging

/// `--max-megapixels` and `--max-bytes`: the limits of the process that decodes the images (a worker,
/// `run`, or `tiltshift`). Both fall back to `SHIFTWORK_*` variables.
struct LimitOptions: ParsableArguments {
    @Option(
        help:
            "Largest accepted image, in megapixels: larger ones fail as possible decompression bombs (env SHIFTWORK_MAX_MEGAPIXELS; default \(Int(Double(ImageLimits.default.maxPixels) / 1_000_000)))."
    )
    var maxMegapixels: Double?

    @Option(
        help:
            "Largest accepted input, in MiB (env SHIFTWORK_MAX_BYTES; default \(ImageLimits.default.maxBytes / 1_048_576))."
    )
    var maxBytes: Double?

    /// The limits, validated.
    func limits() throws -> ImageLimits {
        let megapixels = try Environment.resolve(
            maxMegapixels, "MAX_MEGAPIXELS", default: Double(ImageLimits.default.maxPixels) / 1_000_000)
        let mebibytes = try Environment.resolve(
            maxBytes, "MAX_BYTES", default: Double(ImageLimits.default.maxBytes) / 1_048_576)
        guard megapixels > 0, mebibytes > 0, megapixels < 1e6, mebibytes < 1e7 else {
            throw ValidationError(
                "--max-megapixels and --max-bytes must be positive numbers (got \(megapixels) and \(mebibytes))")
        }
        return ImageLimits(maxPixels: Int(megapixels * 1_000_000), maxBytes: Int(mebibytes * 1_048_576))
    }
}
