import ArgumentParser
import Imaging

/// The tilt-shift and output options shared by `run`, `submit` and `tiltshift`. Each falls back to a
/// `SHIFTWORK_*` environment variable (named in its help), then to Core Image's recipe and the documented
/// output defaults. `run` and `submit` send them to the workers in `TiltShiftParameters`.
struct FilterOptions: ParsableArguments {
    @Option(
        help:
            "Focus line, as a fraction of the height from the top (with --angle, of the extent across the line), 0...1 (env SHIFTWORK_FOCUS; default 0.5)."
    )
    var focus: Double?

    @Option(
        help:
            "Height of the fully sharp band around the focus line, as a fraction of the height (env SHIFTWORK_BAND; default 0)."
    )
    var band: Double?

    @Option(
        help:
            "Height of the ramp from sharp to fully blurred, as a fraction of the height (env SHIFTWORK_TRANSITION; default 0.25)."
    )
    var transition: Double?

    @Option(help: "Blur radius (Gaussian sigma) in pixels (env SHIFTWORK_RADIUS; default 10).")
    var radius: Double?

    @Option(
        help:
            "Angle of the focus line in degrees, counter-clockwise, -360...360: 0 horizontal, 90 vertical; --focus, --band and --transition are then fractions of the image's extent across the line (env SHIFTWORK_ANGLE; default 0)."
    )
    var angle: Double?

    @Option(
        help:
            "How the blur grows away from the sharp band: blend (one blur blended in, Core Image's recipe) or progressive (the blur itself grows, like a lens's depth of field; about 4 times the work) (env SHIFTWORK_FALLOFF; default blend)."
    )
    var falloff: TiltShiftFalloff?

    @Option(
        help:
            "Output format: jpeg, png, webp, avif or tiff (env SHIFTWORK_FORMAT; default: the input's, JPEG for HEIC, GIF and BMP inputs, which are read but not written)."
    )
    var format: String?

    @Option(
        help:
            "Quality of the lossy output format, 1...100 (env SHIFTWORK_QUALITY; defaults: JPEG 90, WebP 80, AVIF 60). Without --format it applies to whichever lossy format is written; PNG and TIFF are lossless and take none."
    )
    var quality: Int?

    @Option(
        help:
            "The input's metadata in the output: keep (the ICC profile, EXIF with its orientation reset to 1, XMP, IPTC) or strip (the ICC profile only) (env SHIFTWORK_METADATA; default keep)."
    )
    var metadata: MetadataPolicy?

    @Option(
        help:
            "Colours: keep (the pixels and their ICC profile as they are) or srgb (profiled RGB converted to sRGB). CMYK JPEGs and TIFFs become sRGB either way (env SHIFTWORK_COLOUR; default keep)."
    )
    var colour: ColourPolicy?

    /// The filter parameters, validated.
    func parameters() throws -> TiltShiftParameters {
        let recipe = TiltShiftParameters.coreImage
        do {
            return try TiltShiftParameters(
                focusPosition: try Environment.resolve(focus, "FOCUS", default: recipe.focusPosition),
                sharpBand: try Environment.resolve(band, "BAND", default: recipe.sharpBand),
                transition: try Environment.resolve(transition, "TRANSITION", default: recipe.transition),
                blurRadius: try Environment.resolve(radius, "RADIUS", default: recipe.blurRadius),
                angle: try Environment.resolve(angle, "ANGLE", default: recipe.angle),
                falloff: try Self.policy(falloff, "FALLOFF", default: recipe.falloff)
            ).validated()
        } catch let error as CommandError {
            throw error
        } catch {
            throw ValidationError("\(error)")
        }
    }

    /// The encoding options, validated: the format (nil: the input's), the quality of the lossy formats, the
    /// colour and metadata policies.
    func encoding() throws -> EncodingOptions {
        var options = EncodingOptions(
            format: try Self.format(named: Environment.resolve(format, "FORMAT")),
            metadata: try Self.policy(metadata, "METADATA", default: .keep),
            colour: try Self.policy(colour, "COLOUR", default: .keep))
        // An explicit --quality with --format png or tiff is a mistake worth saying; SHIFTWORK_QUALITY, set for
        // every command, is simply not used for the lossless formats.
        if self.quality != nil, let format = options.format, format == .png || format == .tiff {
            throw ValidationError(
                "--quality applies to the lossy formats (jpeg, webp, avif), not to \(format.rawValue): leave it out")
        }
        if let quality = try self.quality
            ?? Environment.value("QUALITY").map({ _ in try Environment.resolve(nil as Int?, "QUALITY", default: 0) })
        {
            options.setLossyQuality(quality)
        }
        do {
            return try options.validated()
        } catch {
            throw ValidationError("\(error)")
        }
    }

    /// The format `name` names (nil for none); refused, naming the supported ones, when it is none of them.
    static func format(named name: String?) throws -> ImageFormat? {
        guard let name else { return nil }
        guard let format = ImageFormat(name: name) else {
            throw ValidationError("unknown output format '\(name)': the supported formats are \(ImageFormat.names)")
        }
        guard format.isWritable else {
            throw ValidationError(
                "\(format.displayName) is read but not written: the output formats are \(ImageFormat.names)")
        }
        return format
    }

    /// The option's policy, else `SHIFTWORK_<NAME>`'s, else `fallback`.
    private static func policy<Policy: RawRepresentable<String>>(
        _ option: Policy?, _ name: String, default fallback: Policy
    ) throws -> Policy
    where Policy: CaseIterable {
        if let option { return option }
        guard let text = Environment.value(name) else { return fallback }
        guard let policy = Policy(rawValue: text.lowercased()) else {
            let names = Policy.allCases.map(\.rawValue).joined(separator: " or ")
            throw CommandError("SHIFTWORK_\(name)=\(text) is not one of \(names)")
        }
        return policy
    }
}

extension MetadataPolicy: ExpressibleByArgument {}
extension ColourPolicy: ExpressibleByArgument {}
extension TiltShiftFalloff: ExpressibleByArgument {}
