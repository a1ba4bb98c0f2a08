import CImageCodecs

/// The CRC-32C (Castagnoli) checksum of an output a worker wrote to a sink (`TaskOutput.crc32c`), the
/// one S3 knows as `x-amz-checksum-crc32c`. Computed by ISA-L (hardware instructions where present).
enum CRC32C {
    /// The checksum of `bytes`.
    static func checksum(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBufferPointer { sw_crc32c($0.baseAddress, $0.count) }
    }
}
