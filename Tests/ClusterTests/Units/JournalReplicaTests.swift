import Foundation
import Wire
import XCTest

@testable import Cluster

/// The journal's part in a pair's stream, on disk: the active one frames each record once (the file and the
/// stream get the same frame) and reads its file back for a snapshot; the passive one appends the frames it
/// was sent as they came, and a restart replays them.
final class JournalReplicaTests: XCTestCase {
    private var directory: URL!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "journal-replica-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: directory)
    }

    func testTheStreamGetsTheFramesTheFileHoldsAndASnapshotReadsThemBack() throws {
        let (journal, _) = try Journal.open(directory: directory, coordinatorID: "c", paired: true)
        let opened = try XCTUnwrap(journal.takeOpenedRecords())
        journal.written = []
        try journal.recordCancelled(CancelBatch(batchID: "b"))
        try journal.recordRetired(batchID: "b")
        let written = journal.takeWritten()
        let frames = written.compactMap { item -> [UInt8]? in
            if case .record(_, let framed) = item { framed } else { nil }
        }
        XCTAssertEqual(
            frames,
            [JournalRecord.batchCancelled(CancelBatch(batchID: "b")), .batchRetired(batchID: "b")].map {
                JournalFraming.frame(JournalCodec.encode($0))
            })
        XCTAssertEqual(
            journal.readRecords(),
            opened
                + [.batchCancelled(CancelBatch(batchID: "b")), .batchRetired(batchID: "b")].map(JournalCodec.encode),
            "buffered records are written before the file is read")
    }

    func testAppliedFramesAreReplayedAfterARestart() throws {
        let finished = JournalRecord.itemFinished(
            ItemFinished(batchID: "b", itemIndex: 0, outcome: .failure(TaskFailure(code: .download, message: "404"))))
        let accepted = JournalRecord.batchAccepted(
            batchID: "b", client: [1],
            submit: SubmitBatch(
                requestID: "r", items: [BatchItem(source: "https://example.com/0.jpg", outputName: "0")]),
            unixMilliseconds: 1)
        let frames = [accepted, finished].flatMap { JournalFraming.frame(JournalCodec.encode($0)) }
        let reaches = JournalPosition(term: 0, records: 2)
        do {
            let (journal, _) = try Journal.open(directory: directory, coordinatorID: "c", paired: true)
            try journal.appendReplicated(frames: frames, reaches: reaches, sync: true)
            XCTAssertEqual(journal.position, reaches)
        }
        let (journal, recovered) = try Journal.open(directory: directory, coordinatorID: "c", paired: true)
        XCTAssertEqual(journal.position, reaches)
        XCTAssertEqual(recovered.batches.map(\.batchID), ["b"])
        XCTAssertNotNil(recovered.batches.first?.finished[0], "the finished item came back with its batch")
    }
}
