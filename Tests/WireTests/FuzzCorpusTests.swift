import Foundation
import Wire
import XCTest

/// The seed corpus of the fuzz target in Fuzz/ (`scripts/fuzz`): one encoded message of each kind and one
/// journal record of each kind, committed under Fuzz/corpus. Regenerate it after a protocol change with
/// `SHIFTWORK_WRITE_FUZZ_CORPUS=1 swift test --filter FuzzCorpusTests`.
final class FuzzCorpusTests: XCTestCase {
    private static var corpus: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
            .appendingPathComponent("Fuzz/corpus")
    }

    private static var seeds: [(directory: String, name: String, bytes: [UInt8])] {
        SampleMessages.small.enumerated().map { ("wire", "message-\($0.offset)", WireCodec.encode($0.element)) }
            + JournalCodecTests.sampleRecords.enumerated().map {
                ("journal", "record-\($0.offset)", JournalCodec.encode($0.element))
            }
    }

    func testTheCommittedCorpusHoldsEverySeedAndDecodes() throws {
        if ProcessInfo.processInfo.environment["SHIFTWORK_WRITE_FUZZ_CORPUS"] != nil {
            for seed in Self.seeds {
                let directory = Self.corpus.appendingPathComponent(seed.directory)
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
                try Data(seed.bytes).write(to: directory.appendingPathComponent(seed.name))
            }
        }
        for seed in Self.seeds {
            let file = Self.corpus.appendingPathComponent(seed.directory).appendingPathComponent(seed.name)
            let bytes = try XCTUnwrap(
                FileManager.default.contents(atPath: file.path),
                "\(file.path) is missing: regenerate the corpus (see this test's description)")
            switch seed.directory {
            case "wire": XCTAssertNoThrow(try WireCodec.decode([UInt8](bytes)), seed.name)
            default: XCTAssertNoThrow(try JournalCodec.decode([UInt8](bytes)), seed.name)
            }
        }
    }
}
