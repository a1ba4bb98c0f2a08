import ArgumentParser
import Imaging

/// The tilt-shift and output options shared by `run`, `submit` and `tiltshift`. Each falls back to a
/// `SHIFTWORK_*` environment variable (named in its help), then to Core Image's recipe.
struct FilterOptions: ParsableArguments {
    @Option(help: "Focus line, as a fraction of the height from the top, 0...1 (env SHIFTWORK_FOCUS; default 0.5).")
    var focus: Double?

    @Option(help: "Height of the fully sharp band around the focus line, as a fraction of the height (env SHIFTWORK_BAND; default 0).")
    var band: Double?

    @Option(help: "Height of the ramp from sharp to fully blurred, as a fraction of the height (env SHIFTWORK_TRANSITION; default 0.25).")
    var transition: Double?

    @Option(help: "Blur radius (Gaussian sigma) in pixels (env SHIFTWORK_RADIUS; default 10).")
    var radius: Double?

    @Option(help: "Output format: jpeg or png (env SHIFTWORK_FORMAT; default: the input's).")
    var format: String?

    @Option(help: "JPEG quality, 1...100 (env SHIFTWORK_QUALITY; default 90).")
    var quality: Int?

    /// The filter parameters, validated.
    func parameters() throws -> TiltShiftParameters {
        let recipe = TiltShiftParameters.coreImage
        do {
            return try TiltShiftParameters(
                focusPosition: try Environment.resolve(focus, "FOCUS", default: recipe.focusPosition),
                sharpBand: try Environment.resolve(band, "BAND", default: recipe.sharpBand),
                transition: try Environment.resolve(transition, "TRANSITION", default: recipe.transition),
                blurRadius: try Environment.resolve(radius, "RADIUS", default: recipe.blurRadius)
            ).validated()
        } catch let error as CommandError {
            throw error
        } catch {
            throw ValidationError("\(error)")
        }
    }

    /// The encoding options, validated.
    func encoding() throws -> EncodingOptions {
        var chosen: ImageFormat?
        if let format = format ?? Environment.value("FORMAT") {
            switch format.lowercased() {
            case "jpeg", "jpg": chosen = .jpeg
            case "png": chosen = .png
            default: throw ValidationError("unknown format '\(format)': use jpeg or png")
            }
        }
        do {
            return try EncodingOptions(
                format: chosen, jpegQuality: try Environment.resolve(quality, "QUALITY", default: 90)
            ).validated()
        } catch let error as CommandError {
            throw error
        } catch {
            throw ValidationError("\(error)")
        }
    }
}
