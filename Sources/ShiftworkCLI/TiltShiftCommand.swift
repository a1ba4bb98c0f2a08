import ArgumentParser
import Fetching
import Foundation
import Imaging
import Runtime

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `shiftwork tiltshift INPUT OUTPUT [options]`: applies the tilt-shift to one image, locally.
struct TiltShiftCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tiltshift",
        abstract: "Apply a tilt-shift (miniature) effect to one image.",
        discussion: """
            INPUT is a JPEG, PNG, WebP, AVIF, HEIC/HEIF, TIFF, GIF or BMP file, a file:// URL or an \
            http(s):// URL; its format is recognised by its content (a TIFF's first page, a GIF's first \
            frame). The output format is --format if given, else OUTPUT's extension (.jpg, .jpeg, .png, \
            .webp, .avif, .tif, .tiff), else the input's format (JPEG for HEIC, GIF and BMP, which are read \
            but not written); an extension that names another format than --format, or a format that cannot \
            be written (.heic, .gif, .bmp…), is refused before any work. --quality is the lossy format's \
            (JPEG 90, WebP 80, AVIF 60 by default). A JPEG going to JPEG is filtered in its own Y'CbCr \
            planes; JPEG, PNG, TIFF and BMP stream from file to file in rows, WebP, AVIF, HEIC and GIF are \
            decoded whole, WebP and AVIF encoded from the whole picture (their libraries need it). The ICC profile, EXIF \
            (its orientation reset to 1: the pixels are written upright), XMP and IPTC are kept (--metadata, \
            --colour; IPTC only into JPEG). The defaults are Core Image's recipe: sharp at mid-height, \
            blurred (σ = 10 px) from the top and bottom quarters outwards.
            """)

    @Argument(help: "The image to read: a path, file:// URL or http(s):// URL.")
    var input: String

    @Argument(help: "Where to write the result ('-' for standard output).")
    var output: String

    @OptionGroup var filter: FilterOptions

    @Option(
        help:
            "zlib level for PNG output, 0…9 (1…3: our ISA-L encoder, about six times faster than zlib at 3; 4…9: zlib, slower, smaller files)."
    )
    var pngLevel: Int = PNGCodec.defaultCompressionLevel

    @Option(help: "Threads for the filter (0: one per core).")
    var threads: Int = 1

    @OptionGroup var limitOptions: LimitOptions

    @Option(
        name: .customLong("repeat"),
        help: "Run the whole pipeline this many times and report the fastest (benchmarking).")
    var repetitions: Int = 1

    @Flag(help: "Print the time spent decoding, filtering and encoding, and megapixels per second, to standard error.")
    var timing = false

    @Flag(
        name: .customLong("always-rgb"),
        help: "Filter a JPEG going to JPEG in RGB like other images, not in its own Y'CbCr planes (for comparison).")
    var alwaysRGB = false

    @Flag(
        name: .customLong("exact-blur"),
        help: "Blur at full resolution even where σ ≥ 4 lets the blur run on a halved image (slower; for comparison).")
    var exactBlur = false

    func validate() throws {
        guard repetitions >= 1 else { throw ValidationError("--repeat must be at least 1") }
        guard threads >= 0 else { throw ValidationError("--threads must be 0 (one per core) or more") }
    }

    func run() async throws {
        do {
            try await execute()
        } catch let error as ImagingError {
            FileHandle.standardError.write(Data("shiftwork tiltshift: \(error.message)\n".utf8))
            throw ExitCode.failure
        }
    }

    private func execute() async throws {
        let parameters = try filter.parameters()
        let chosen = try filter.encoding()
        let limits = try limitOptions.limits()
        let threadCount = threads == 0 ? Self.coreCount : threads
        let outputFormat = try Self.outputFormat(chosen: chosen.format, output: output)
        var options = chosen
        (options.format, options.pngCompressionLevel) = (outputFormat, pngLevel)
        let encoding = try options.validated()
        let repetitions = repetitions
        let (input, output, jpegPlanes, exactBlur) = (input, output, !alwaysRGB, exactBlur)

        // Decoding, filtering and encoding are CPU-bound: they run on a thread of their own, not on Swift's
        // cooperative pool (Ctrl-C still ends the process at once).
        let result: ProcessedImage
        let best: PipelineTimings
        if repetitions == 1, output != "-", let path = Self.localPath(input) {
            // One run from a file to a file: the image streams through, never whole in memory.
            (result, best) = try await ComputeThreads.shared.run { cancellation in
                var timings = PipelineTimings()
                let result = try TiltShiftPipeline.process(
                    file: path, to: output, parameters: parameters, encoding: encoding, limits: limits,
                    threads: threadCount, jpegPlanes: jpegPlanes, exactBlur: exactBlur, cancellation: cancellation,
                    timings: &timings)
                return (result, timings)
            }
        } else {
            let fetched = try await Self.fetch(input, limits: limits)
            (result, best) = try await ComputeThreads.shared.run { cancellation in
                var best: PipelineTimings?
                var result: ProcessedImage?
                for _ in 0..<repetitions {
                    var timings = PipelineTimings()
                    result = try TiltShiftPipeline.process(
                        fetched.data, parameters: parameters, encoding: encoding, limits: limits, threads: threadCount,
                        jpegPlanes: jpegPlanes, exactBlur: exactBlur, cancellation: cancellation, timings: &timings)
                    // The fastest run, each figure on its own (wall and CPU time are disturbed at different moments).
                    best = best.map { $0.fastest(with: timings) } ?? timings
                }
                guard let result, let best else { throw ImagingError(.processing, "nothing was processed") }
                return (result, best)
            }
            try Self.write(result.data, to: output)
        }
        for warning in result.warnings {
            FileHandle.standardError.write(Data("shiftwork tiltshift: warning: \(warning)\n".utf8))
        }
        if timing {
            let megapixels = Double(result.width * result.height) / 1_000_000
            func ms(_ d: Duration) -> Double {
                Double(d.components.seconds) * 1000 + Double(d.components.attoseconds) / 1e15
            }
            let total = ms(best.total)
            let line = String(
                format:
                    "%dx%d %.2f MP: decode %.1f ms, filter %.1f ms (%.1f MP/s), encode %.1f ms, total %.1f ms (%.1f MP/s), threads %d, ",
                result.width, result.height, megapixels, ms(best.decode), ms(best.filter),
                megapixels / ms(best.filter) * 1000,
                ms(best.encode), total, megapixels / total * 1000, threadCount)
            let cpuTotal = ms(best.cpuTotal)
            let cpu = String(
                format:
                    "; cpu: decode %.1f ms, filter %.1f ms (%.1f MP/s), encode %.1f ms, total %.1f ms (%.1f MP/s)\n",
                ms(best.cpuDecode), ms(best.cpuFilter), megapixels / ms(best.cpuFilter) * 1000, ms(best.cpuEncode),
                cpuTotal, megapixels / cpuTotal * 1000)
            FileHandle.standardError.write(Data((line + "\(KernelVariant.selected)" + cpu).utf8))
        }
    }

    /// Reads `input` (a path, file:// URL or http(s):// URL) into memory.
    private static func fetch(_ input: String, limits: ImageLimits) async throws -> EncodedImage {
        let fetcher = ImageFetcher(configuration: FetchConfiguration(allowLocalFiles: true, maxBytes: limits.maxBytes))
        do {
            let fetched = try await fetcher.fetch(input)
            await fetcher.shutdown()
            return fetched
        } catch {
            await fetcher.shutdown()
            throw error
        }
    }

    /// The file path of a local input (a path or a file:// URL); nil for http(s):// URLs.
    private static func localPath(_ input: String) -> String? {
        let lowered = input.lowercased()
        if lowered.hasPrefix("http://") || lowered.hasPrefix("https://") { return nil }
        if lowered.hasPrefix("file://") { return URL(string: input)?.path }
        return input
    }

    private static var coreCount: Int {
        max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
    }

    /// The output format: `chosen` (--format or SHIFTWORK_FORMAT), else the one `output`'s extension names,
    /// else nil (the input's). Refuses an extension that names another format than `chosen`, and one that
    /// names an image format Imaging does not write.
    static func outputFormat(chosen: ImageFormat?, output: String) throws -> ImageFormat? {
        guard output != "-", let dot = output.lastIndex(of: "."), !output[dot...].contains("/") else { return chosen }
        let fileExtension = output[output.index(after: dot)...].lowercased()
        let named = ImageFormat(name: fileExtension).flatMap { $0.isWritable ? $0 : nil }
        let writable = ImageFormat.names
        if named == nil, otherImageExtensions.contains(fileExtension) {
            throw ValidationError(
                "cannot write .\(fileExtension) images (\(output)): the output formats are \(writable); name the file "
                    + "accordingly or choose one with --format")
        }
        if let chosen, let named, chosen != named {
            throw ValidationError(
                "--format \(chosen.rawValue) contradicts the output name \(output) (a \(named.rawValue) name): make them agree"
            )
        }
        return chosen ?? named
    }

    /// Extensions of image formats that Imaging does not write: refused rather than filled with another format.
    private static let otherImageExtensions: Set<String> = [
        "gif", "bmp", "heic", "heif", "jxl", "jp2", "ico", "svg",
    ]

    private static func write(_ bytes: [UInt8], to path: String) throws {
        if path == "-" {
            FileHandle.standardOutput.write(Data(bytes))
            return
        }
        guard let file = fopen(path, "wb") else {
            throw ImagingError(.processing, "cannot write \(path): \(String(cString: strerror(errno)))")
        }
        let written = bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
        let closed = fclose(file)
        guard written == bytes.count, closed == 0 else {
            throw ImagingError(.processing, "cannot write \(path): \(String(cString: strerror(errno)))")
        }
    }
}
