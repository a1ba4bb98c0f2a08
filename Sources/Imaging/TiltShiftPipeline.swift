import Runtime

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The result of `TiltShiftPipeline.process`: encoded bytes and what they hold.
public struct ProcessedImage: Sendable {
    public let data: [UInt8]
    public let format: ImageFormat
    public let width: Int
    public let height: Int
    /// What the caller should know although the image was processed: an ignored colour profile, a CMYK JPEG
    /// converted without one.
    public let warnings: [String]

    public init(data: [UInt8], format: ImageFormat, width: Int, height: Int, warnings: [String] = []) {
        self.data = data
        self.format = format
        self.width = width
        self.height = height
        self.warnings = warnings
    }
}

/// Where the time of one `TiltShiftPipeline` run went (the stages interleave: the image streams through
/// them a few rows at a time): wall-clock time, and the process's CPU time in the same stages (which a
/// machine busy with other work disturbs far less).
public struct PipelineTimings: Sendable, Equatable {
    public var decode: Duration = .zero
    public var filter: Duration = .zero
    public var encode: Duration = .zero
    public var total: Duration { decode + filter + encode }
    public var cpuDecode: Duration = .zero
    public var cpuFilter: Duration = .zero
    public var cpuEncode: Duration = .zero
    public var cpuTotal: Duration { cpuDecode + cpuFilter + cpuEncode }

    public init() {}

    /// The faster of two runs: the one with the smaller total wall time for the wall figures, the one with the
    /// smaller total CPU time for the CPU figures.
    public func fastest(with other: PipelineTimings) -> PipelineTimings {
        var result = total <= other.total ? self : other
        let cpu = cpuTotal <= other.cpuTotal ? self : other
        (result.cpuDecode, result.cpuFilter, result.cpuEncode) = (cpu.cpuDecode, cpu.cpuFilter, cpu.cpuEncode)
        return result
    }
}

/// The process's CPU time (every thread), for `PipelineTimings`.
struct ProcessCPUClock {
    static var now: Duration {
        var time = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
        return .seconds(time.tv_sec) + .nanoseconds(time.tv_nsec)
    }
}

/// Wall and CPU time of a stage, read together.
struct StageClock {
    let wall: ContinuousClock.Instant
    let cpu: Duration
    static var now: StageClock { StageClock(wall: ContinuousClock.now, cpu: ProcessCPUClock.now) }
    /// (wall, cpu) since `self`.
    var elapsed: (Duration, Duration) {
        let end = StageClock.now
        return (end.wall - wall, end.cpu - cpu)
    }
}

/// Decode → tilt-shift → encode, streaming: rows are decoded a few at a time, filtered in a window of rows
/// (`StripBlender`) and encoded as soon as they are final. JPEG → JPEG works in the JPEG's own Y'CbCr planes
/// (`PlanarJPEGPipeline`) when they can be used. Besides the encoded input and output, a run holds
/// the window (for σ = 10 about 340 rows: 16 MB for a 12-megapixel photo, 60 MB for a 12000-pixel-wide image;
/// four times the floats with `TiltShiftFalloff.progressive`), whatever the image's height. A JPEG that must be turned (EXIF orientation) or an interlaced PNG is decoded
/// whole first.
///
/// The call is CPU-bound for as long as the image is large (seconds at 100+ megapixels): from async code,
/// run it on threads of its own (``ComputeThreads``, as `TiltShiftOperation` does), never on Swift's
/// cooperative pool.
public enum TiltShiftPipeline {
    /// Processes encoded JPEG, PNG, WebP, AVIF, HEIF, TIFF, GIF or BMP bytes (recognised by their magic bytes); HEIF,
    /// GIF and BMP inputs are written as JPEG unless `encoding.format` says otherwise (a warning says so).
    ///
    /// - Parameters:
    ///   - limits: byte and pixel limits checked before decoding (decompression bombs).
    ///   - threads: worker threads for the filter (1: the calling thread only).
    ///   - cancellation: raised to stop the work early; checked every few rows while decoding, filtering and
    ///     encoding (so is the current task's cancellation, when called from a task).
    /// - Throws: `ImagingError`: `.decode` for unreadable input, `.limit`, `.processing` for bad
    ///   parameters, `.cancelled` when `cancellation` is raised or the current task is cancelled.
    public static func process(
        _ data: [UInt8], parameters: TiltShiftParameters, encoding: EncodingOptions,
        limits: ImageLimits = .default, threads: Int = 1,
        cancellation: CancellationFlag? = nil
    ) throws -> ProcessedImage {
        var timings = PipelineTimings()
        return try process(
            data, parameters: parameters, encoding: encoding, limits: limits, threads: threads,
            cancellation: cancellation, timings: &timings)
    }

    /// `process`, also reporting where the time went.
    ///
    /// `jpegPlanes: false` filters a JPEG going to JPEG through RGB, like any other image, instead of in its
    /// own Y'CbCr planes (to compare the two; the planar path is faster for the same result).
    /// `exactBlur: true` blurs at full resolution even where σ is large enough for the halved plane
    /// (`DecimatedStripBlender`, the default from σ 4 with an upright focus line).
    public static func process(
        _ data: [UInt8], parameters: TiltShiftParameters, encoding: EncodingOptions,
        limits: ImageLimits = .default, threads: Int = 1, jpegPlanes: Bool = true,
        exactBlur: Bool = false, cancellation: CancellationFlag? = nil,
        timings: inout PipelineTimings
    ) throws -> ProcessedImage {
        try data.withUnsafeBufferPointer { bytes in
            try run(
                .memory(bytes), to: .memory, parameters: parameters, encoding: encoding, limits: limits,
                threads: threads, jpegPlanes: jpegPlanes, exactBlur: exactBlur, cancellation: cancellation,
                timings: &timings)
        }
    }

    /// Processes the image in the file at `inputPath` into the file at `outputPath`, streaming from file to file:
    /// neither the encoded nor the decoded image is ever whole in memory (unless it must be turned or is an
    /// interlaced PNG). The output file is removed when the work fails.
    /// - Returns: the result, with empty `data` (the bytes are in the file).
    public static func process(
        file inputPath: String, to outputPath: String, parameters: TiltShiftParameters,
        encoding: EncodingOptions, limits: ImageLimits = .default, threads: Int = 1,
        jpegPlanes: Bool = true, exactBlur: Bool = false, cancellation: CancellationFlag? = nil,
        timings: inout PipelineTimings
    ) throws -> ProcessedImage {
        guard let input = fopen(inputPath, "rb") else {
            throw ImagingError(.download, "cannot read \(inputPath): \(String(cString: strerror(errno)))")
        }
        defer { fclose(input) }
        var status = stat()
        if fstat(fileno(input), &status) == 0 { try limits.checkBytes(Int(status.st_size), source: inputPath) }
        guard let output = fopen(outputPath, "wb") else {
            throw ImagingError(.processing, "cannot write \(outputPath): \(String(cString: strerror(errno)))")
        }
        do {
            let result = try run(
                .file(input), to: .file(output), parameters: parameters, encoding: encoding, limits: limits,
                threads: threads, jpegPlanes: jpegPlanes, exactBlur: exactBlur, cancellation: cancellation,
                timings: &timings)
            guard fclose(output) == 0 else {
                throw ImagingError(.processing, "cannot write \(outputPath): \(String(cString: strerror(errno)))")
            }
            return result
        } catch {
            fclose(output)
            unlink(outputPath)
            throw error
        }
    }

    static func run(
        _ source: ImageSource, to destination: ImageDestination, parameters: TiltShiftParameters,
        encoding: EncodingOptions, limits: ImageLimits, threads: Int, kernels: KernelVariant = .automatic,
        jpegPlanes: Bool = true, exactBlur: Bool = false, correctClipping: Bool = true,
        cancellation: CancellationFlag?,
        timings: inout PipelineTimings
    ) throws -> ProcessedImage {
        let parameters = try parameters.validated()
        let encoding = try encoding.validated()
        return try CancellationToken.with(cancellation) { token in
            try token.check()
            var start = StageClock.now
            var (decoder, inputFormat, warnings) = try RowDecoders.open(
                source, limits: limits, colour: encoding.colour,
                keepDeep: true, token: token)
            let (openTime, openCPU) = start.elapsed
            var (decodeTime, decodeCPU) = (openTime, openCPU)
            let format = encoding.format ?? inputFormat.defaultOutput
            if encoding.format == nil, format != inputFormat {
                warnings.append(
                    "\(inputFormat.displayName) input written as \(format.displayName) (\(inputFormat.displayName) is read, "
                        + "not written; choose another output format with --format)")
            }
            let (width, height, depth) = (decoder.width, decoder.height, decoder.bitsPerSample)
            if depth == 16, let lost = DeepOutput.warning(for: format) { warnings.append(lost) }
            try Self.checkWritable(format, width: width, height: height)
            let metadata = decoder.metadata.applying(encoding.metadata)
            var (encodeTime, encodeCPU) = (Duration.zero, Duration.zero)
            var filterStart = StageClock.now
            let finalEncoder: RowEncoder
            if jpegPlanes, format == .jpeg, let jpeg = decoder as? JPEGRowDecoder,
                let layout = jpeg.startPlanes().planes
            {
                // JPEG → JPEG in the JPEG's own planes; any other JPEG (CMYK, gray, odd sampling, arithmetic
                // coding, 12-bit, turned by its orientation, converted to sRGB) goes through RGB below.
                let encoder = try JPEGRowEncoder(
                    width: width, height: height, planes: layout, quality: encoding.jpegQuality,
                    metadata: metadata, destination: destination)
                filterStart = StageClock.now
                let pipeline = PlanarJPEGPipeline(
                    decoder: jpeg, layout: layout, parameters: parameters, threads: threads,
                    kernels: kernels, decimate: !exactBlur, correctClipping: correctClipping,
                    token: token)
                try pipeline.run(
                    into: encoder, decode: &decodeTime, decodeCPU: &decodeCPU, encode: &encodeTime,
                    encodeCPU: &encodeCPU)
                finalEncoder = encoder
            } else {
                let encoder = try RowEncoders.open(
                    format, width: width, height: height, channels: decoder.channels,
                    encoding: encoding, metadata: metadata, bitsPerSample: depth,
                    sourceBits: decoder.sourceBitsPerSample, destination: destination)
                filterStart = StageClock.now
                let blender = StreamingBlenders.make(
                    width: width, height: height, channels: decoder.channels, sigma: parameters.blurRadius,
                    mask: TiltShiftMask.mask(width: width, height: height, parameters: parameters),
                    levels: parameters.falloff.levels, threads: threads, kernels: kernels, decimate: !exactBlur,
                    bytesPerSample: depth / 8, token: token)
                while blender.received < height {
                    let (space, available) = blender.inputSpace()
                    let rows = min(available, Self.rowsPerRead)
                    start = StageClock.now
                    try decoder.read(into: space, rows: rows, token: token)
                    let (wall, cpu) = start.elapsed
                    decodeTime += wall
                    decodeCPU += cpu
                    try blender.commit(rows: rows) { finished, count, _ in
                        let start = StageClock.now
                        try encoder.write(finished, rows: count, token: token)
                        let (wall, cpu) = start.elapsed
                        encodeTime += wall
                        encodeCPU += cpu
                    }
                }
                finalEncoder = encoder
            }
            start = StageClock.now
            let bytes = try finalEncoder.finish(token: token) ?? []
            let (wall, cpu) = start.elapsed
            encodeTime += wall
            encodeCPU += cpu
            let (filterWall, filterCPU) = filterStart.elapsed
            timings.decode += decodeTime
            timings.encode += encodeTime
            // The filter's share: the streaming part less the decoding and encoding inside it.
            timings.filter += filterWall - (decodeTime - openTime) - encodeTime
            timings.cpuDecode += decodeCPU
            timings.cpuEncode += encodeCPU
            timings.cpuFilter += filterCPU - (decodeCPU - openCPU) - encodeCPU
            return ProcessedImage(data: bytes, format: format, width: width, height: height, warnings: warnings)
        }
    }

    /// Refuses, before any filtering, an output format that cannot hold an image of this size (WebP: at most
    /// 16383 pixels a side), naming the formats that can.
    static func checkWritable(_ format: ImageFormat, width: Int, height: Int) throws {
        guard format.isWritable else { throw ImagingError.notWritable(format) }
        guard format == .webp, max(width, height) > webpMaxSide else { return }
        let others = ImageFormat.writable.filter { $0 != .webp }.map(\.rawValue).joined(separator: ", ")
        throw ImagingError(
            .processing,
            "cannot write a \(width)×\(height) image as WebP (at most \(webpMaxSide) pixels a side): choose one of \(others)"
        )
    }

    /// WebP's largest width and height.
    static let webpMaxSide = 16383

    /// Rows decoded at a time: few enough that they are still in cache when the filter reads them.
    static let rowsPerRead = 16
}
