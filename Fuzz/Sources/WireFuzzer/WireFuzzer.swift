import Wire

/// libFuzzer's entry point: every input is offered to the decoders of both formats that Shiftwork reads
/// from outside, the wire messages (`WireCodec`) and the journal: as one record (`JournalCodec`) and as a
/// journal file (`JournalFraming`, then each intact record decoded).
///
/// A decoder must either throw `WireError` or return a value; anything else (a crash, a trap, a sanitizer
/// report, a hang) is a finding. A decoded message must also survive a round trip: encoding it and
/// decoding that again gives the same bytes when encoded once more.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    if let message = try? WireCodec.decode(bytes) {
        let encoded = WireCodec.encode(message)
        guard let again = try? WireCodec.decode(encoded) else {
            fatalError("a decoded message does not decode after encoding: \(message)")
        }
        precondition(WireCodec.encode(again) == encoded, "a message changed in a round trip: \(message)")
    }
    if let record = try? JournalCodec.decode(bytes) {
        let encoded = JournalCodec.encode(record)
        precondition(
            (try? JournalCodec.decode(encoded)) != nil, "a decoded journal record does not decode after encoding")
    }
    let (records, intactLength) = JournalFraming.records(in: bytes, maxRecordSize: 1 << 20)
    precondition(intactLength <= size, "the journal reader claimed more bytes than it was given")
    for record in records { _ = try? JournalCodec.decode(record) }
    return 0
}
