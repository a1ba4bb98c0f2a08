import Wire

/// A `PairJournal`'s frames read and checked as one, without copying a record: every frame within the
/// bytes, no longer than the journal file takes, passing its CRC-32, and a record of a known kind
/// (`JournalRecordKind`; `pairPosition` and `pairTerm`, which set the position from their body, decoded
/// whole). It counts the records, follows the position from where the message starts, and marks the frames
/// past what the receiver holds (`fresh`) and whether any of them must be synced.
struct CheckedFrames: Equatable {
    /// Records in the message.
    var count = 0
    /// The position after the last record.
    var reaches: JournalPosition
    /// The byte ranges of the frames whose records are past `held`, in order (adjacent frames merged).
    var fresh: [Range<Int>] = []
    /// Records in `fresh`.
    var freshCount = 0
    /// Whether a record in `fresh` is one the active coordinator synced (`JournalRecordKind.isSynced`).
    var freshNeedsSync = false

    /// Why a message's frames were refused.
    struct Problem: Error, Equatable, CustomStringConvertible {
        let description: String
    }

    /// `frames` checked, for a message that starts at `from`, received by a journal that holds `held`.
    static func read(
        _ frames: [UInt8], from: JournalPosition, after held: JournalPosition,
        maxRecordSize: Int = ReplicationReceiver.maxRecordSize
    ) -> Result<CheckedFrames, Problem> {
        frames.withUnsafeBytes { bytes in
            var checked = CheckedFrames(reaches: from)
            var offset = 0
            while offset < bytes.count {
                let problemHere = "record \(checked.count + 1) (at byte \(offset) of \(bytes.count))"
                guard bytes.count - offset >= 8 else {
                    return .failure(Problem(description: "\(problemHere) is cut short: nothing of the message applied"))
                }
                let length = Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
                let checksum = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self))
                guard length <= maxRecordSize, bytes.count - offset - 8 >= length else {
                    return .failure(
                        Problem(
                            description: "\(problemHere) says \(length) bytes, more than the message holds or the "
                                + "journal takes: nothing of the message applied"))
                }
                let body = UnsafeRawBufferPointer(rebasing: bytes[(offset + 8)..<(offset + 8 + length)])
                guard CRC32.checksum(body) == checksum else {
                    return .failure(
                        Problem(description: "\(problemHere) failed its checksum: nothing of the message applied"))
                }
                guard let kind = JournalRecordKind.of(body) else {
                    return .failure(
                        Problem(
                            description: "\(problemHere) passed its checksum but is no record this version knows: "
                                + "nothing of the message applied"))
                }
                let after: JournalPosition
                switch kind {
                case .pairPosition, .pairTerm:
                    guard let record = try? JournalCodec.decode(body) else {
                        return .failure(
                            Problem(
                                description: "\(problemHere) passed its checksum but does not decode: nothing of "
                                    + "the message applied"))
                    }
                    after = checked.reaches.advanced(by: record)
                default:
                    after =
                        kind.isCounted
                        ? JournalPosition(term: checked.reaches.term, records: checked.reaches.records &+ 1)
                        : checked.reaches
                }
                let frame = offset..<(offset + 8 + length)
                if after > held {
                    if let last = checked.fresh.last, last.upperBound == frame.lowerBound {
                        checked.fresh[checked.fresh.count - 1] = last.lowerBound..<frame.upperBound
                    } else {
                        checked.fresh.append(frame)
                    }
                    checked.freshCount += 1
                    checked.freshNeedsSync = checked.freshNeedsSync || kind.isSynced
                }
                checked.count += 1
                checked.reaches = after
                offset = frame.upperBound
            }
            return .success(checked)
        }
    }
}
