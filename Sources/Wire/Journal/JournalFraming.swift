/// How journal records sit in the journal file: each framed as `[length: UInt32 LE][CRC-32: UInt32 LE][bytes]`
/// (CRC-32 of the bytes, IEEE 802.3). The coordinator's `JournalFile` reads and writes files through it;
/// the fuzz target reads arbitrary bytes through it.
public enum JournalFraming {
    /// The frame of one record.
    public static func frame(_ record: [UInt8]) -> [UInt8] {
        var frame: [UInt8] = []
        frame.reserveCapacity(record.count + 8)
        withUnsafeBytes(of: UInt32(truncatingIfNeeded: record.count).littleEndian) { frame += $0 }
        withUnsafeBytes(of: CRC32.checksum(record).littleEndian) { frame += $0 }
        frame += record
        return frame
    }

    /// The intact records at the start of `contents`, and how many bytes they span. Reading stops at the
    /// first frame that is incomplete, longer than `maxRecordSize`, or fails its checksum (a write torn by a
    /// crash, or damage): what follows it cannot be trusted.
    public static func records(
        in contents: UnsafeRawBufferPointer, maxRecordSize: Int
    ) -> (records: [[UInt8]], intactLength: Int) {
        var records: [[UInt8]] = []
        var offset = 0
        while contents.count - offset >= 8 {
            let length = Int(UInt32(littleEndian: contents.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
            let checksum = UInt32(littleEndian: contents.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self))
            guard length <= maxRecordSize, contents.count - offset - 8 >= length else { break }
            let body = UnsafeRawBufferPointer(rebasing: contents[(offset + 8)..<(offset + 8 + length)])
            guard CRC32.checksum(body) == checksum else { break }
            records.append([UInt8](body))
            offset += 8 + length
        }
        return (records, offset)
    }
}
