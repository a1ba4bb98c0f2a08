import ArgumentParser
import Imaging

/// The tilt-shift and output options shared by `run`, `submit` and `tiltshift`.
struct FilterOptions: ParsableArguments {
    @Option(help: "Focus line, as a fraction of the height from the top (0...1).")
    var focus: Double = TiltShiftParameters.coreImage.focusPosition

    @Option(help: "Height of the fully sharp band around the focus line, as a fraction of the height.")
    var band: Double = TiltShiftParameters.coreImage.sharpBand

    @Option(help: "Height of the ramp from sharp to fully blurred, as a fraction of the height.")
    var transition: Double = TiltShiftParameters.coreImage.transition

    @Option(help: "Blur radius (Gaussian sigma) in pixels.")
    var radius: Double = TiltShiftParameters.coreImage.blurRadius

    @Option(help: "Output format: jpeg or png (default: the input's).")
    var format: String?

    @Option(help: "JPEG quality, 1...100.")
    var quality: Int = 90

    /// The filter parameters, validated.
    func parameters() throws -> TiltShiftParameters {
        do {
            return try TiltShiftParameters(
                focusPosition: focus, sharpBand: band, transition: transition, blurRadius: radius
            ).validated()
        } catch {
            throw ValidationError("\(error)")
        }
    }

    /// The encoding options, validated.
    func encoding() throws -> EncodingOptions {
        var chosen: ImageFormat?
        if let format {
            switch format.lowercased() {
            case "jpeg", "jpg": chosen = .jpeg
            case "png": chosen = .png
            default: throw ValidationError("unknown format '\(format)': use jpeg or png")
            }
        }
        do {
            return try EncodingOptions(format: chosen, jpegQuality: quality).validated()
        } catch {
            throw ValidationError("\(error)")
        }
    }
}
