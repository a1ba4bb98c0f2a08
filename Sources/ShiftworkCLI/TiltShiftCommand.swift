import ArgumentParser
import Fetching
import Foundation
import Imaging
import Operations

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
            INPUT is a JPEG or PNG file, a file:// URL or an http(s):// URL; its format is recognised by \
            its content. The output format is --format if given, else OUTPUT's extension (.jpg, .jpeg, \
            .png), else the input's format. The defaults are Core Image's recipe: sharp at mid-height, \
            blurred (σ = 10 px) from the top and bottom quarters outwards.
            """)

    @Argument(help: "The image to read: a path, file:// URL or http(s):// URL.")
    var input: String

    @Argument(help: "Where to write the result ('-' for standard output).")
    var output: String

    @OptionGroup var filter: FilterOptions

    @Option(help: "zlib level for PNG output, 0…9 (3: about four times faster than 6, files about a fifth larger).")
    var pngLevel: Int = PNGCodec.defaultCompressionLevel

    @Option(help: "Threads for the filter (0: one per core).")
    var threads: Int = 1

    @OptionGroup var limitOptions: LimitOptions

    @Option(name: .customLong("repeat"), help: "Run the whole pipeline this many times and report the fastest (benchmarking).")
    var repetitions: Int = 1

    @Flag(help: "Print the time spent decoding, filtering and encoding, and megapixels per second, to standard error.")
    var timing = false

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
        let fetcher = ImageFetcher(configuration: FetchConfiguration(allowLocalFiles: true, maxBytes: limits.maxBytes))
        let fetched: EncodedImage
        do {
            fetched = try await fetcher.fetch(input)
            await fetcher.shutdown()
        } catch {
            await fetcher.shutdown()
            throw error
        }
        let outputFormat = chosen.format ?? Self.format(ofPath: output) ?? fetched.format
        let encoding = try EncodingOptions(format: outputFormat, jpegQuality: chosen.jpegQuality, pngCompressionLevel: pngLevel).validated()
        let threadCount = threads == 0 ? Self.coreCount : threads

        // Decoding, filtering and encoding are CPU-bound: they run on a thread of their own, not on Swift's
        // cooperative pool (Ctrl-C still ends the process at once).
        let repetitions = repetitions
        let (result, size, best) = try await ComputeThreads.shared.run { cancellation in
            var best: (decode: Duration, filter: Duration, encode: Duration)?
            var result: [UInt8] = []
            var size = (0, 0)
            let clock = ContinuousClock()
            for _ in 0..<repetitions {
                let t0 = clock.now
                var filtered = try ImageCodec.decode(fetched.data, limits: limits, cancellation: cancellation).image
                let t1 = clock.now
                try TiltShiftFilter.applyInPlace(&filtered, parameters: parameters, threads: threadCount, cancellation: cancellation)
                let t2 = clock.now
                result = try ImageCodec.encode(filtered, as: encoding.format ?? fetched.format, jpegQuality: encoding.jpegQuality,
                                               pngCompressionLevel: encoding.pngCompressionLevel, cancellation: cancellation)
                let t3 = clock.now
                size = (filtered.width, filtered.height)
                let run = (t1 - t0, t2 - t1, t3 - t2)
                if let current = best {
                    if run.0 + run.1 + run.2 < current.decode + current.filter + current.encode { best = run }
                } else {
                    best = run
                }
            }
            return (result, size, best)
        }
        try Self.write(result, to: output)
        if timing, let best {
            let megapixels = Double(size.0 * size.1) / 1_000_000
            func ms(_ d: Duration) -> Double { Double(d.components.seconds) * 1000 + Double(d.components.attoseconds) / 1e15 }
            let total = ms(best.decode) + ms(best.filter) + ms(best.encode)
            let line = String(
                format: "%dx%d %.2f MP: decode %.1f ms, filter %.1f ms (%.1f MP/s), encode %.1f ms, total %.1f ms (%.1f MP/s), threads %d\n",
                size.0, size.1, megapixels, ms(best.decode), ms(best.filter), megapixels / ms(best.filter) * 1000,
                ms(best.encode), total, megapixels / total * 1000, threadCount)
            FileHandle.standardError.write(Data(line.utf8))
        }
    }

    private static var coreCount: Int {
        max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
    }

    private static func format(ofPath path: String) -> ImageFormat? {
        guard let dot = path.lastIndex(of: "."), !path[dot...].contains("/") else { return nil }
        return ImageFormat(name: String(path[path.index(after: dot)...]))
    }

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
