// Messages between the coordinator and a worker about tasks. Their types are generated from proto/
// (Generated/TaskMessages.generated.swift); what they mean beyond their fields is here.

extension TaskOutput {
    /// Creates the metadata of an output that did not travel: held on the worker, or written to `location`.
    public init(
        heldOnWorker: Bool = false, location: String = "", size: UInt64, crc32c: UInt32 = 0,
        mediaType: String, width: UInt32 = 0, height: UInt32 = 0
    ) {
        self.init(
            data: [], mediaType: mediaType, width: width, height: height, heldOnWorker: heldOnWorker,
            location: location, size: size, crc32c: crc32c)
    }
}
