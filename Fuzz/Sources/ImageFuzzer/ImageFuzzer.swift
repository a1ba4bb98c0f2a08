import Imaging

/// libFuzzer's entry point for the image decoders: every input goes to `ImageCodec.decode`, which recognises the
/// format by its first bytes and runs that decoder (the seeds in Fuzz/corpus/images start it at every format read:
/// JPEG, PNG, WebP, AVIF, HEIF, TIFF, GIF, BMP), under small limits so that a header claiming a huge image is
/// refused quickly, as it must be, instead of exhausting the fuzzer's memory.
///
/// Each input is decoded twice: to 8 bits (`decode`) and at its own depth (`decodeKeepingDepth`, 16-bit PNG and TIFF).
/// A decoder must either throw `ImagingError` or return an image of the size it announced; anything else (a crash,
/// a trap, a sanitizer report, a hang) is a finding.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let limits = ImageLimits(maxPixels: 4_000_000, maxBytes: 1 << 20)
    do {
        let (image, _) = try ImageCodec.decode(bytes, limits: limits)
        precondition(
            image.width > 0 && image.height > 0 && image.pixels.count == image.width * image.height * image.channels,
            "a decoded image's pixels do not match its size")
        // And as the pipeline reads it: 16-bit PNG and TIFF at 16 bits (issue #32).
        let deep = try ImageCodec.decodeKeepingDepth(bytes, limits: limits)
        precondition(
            deep.samples.count == deep.width * deep.height * deep.channels && [8, 16].contains(deep.bitsPerSample),
            "16-bit samples do not match the image's size")
    } catch is ImagingError {
        // Refused with a message: what bad input must do.
    } catch {
        fatalError("a decoder threw something other than ImagingError: \(error)")
    }
    return 0
}
