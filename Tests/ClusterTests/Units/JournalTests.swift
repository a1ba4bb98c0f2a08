import Foundation
import Wire
import XCTest

@testable import Cluster

/// The journal on disk: framing, torn writes, replay and compaction.
final class JournalTests: XCTestCase {
    private var directory: URL!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("journal-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: directory)
    }

    private func submit(_ count: Int) -> SubmitBatch {
        SubmitBatch(
            requestID: "r",
            items: (0..<count).map { BatchItem(source: "https://example.com/\($0).jpg", outputName: "\($0)") })
    }

    func testCRC32MatchesTheStandardCheckValue() {
        XCTAssertEqual(CRC32.checksum(Array("123456789".utf8)), 0xCBF4_3926)
    }

    func testATornOrDamagedTailIsCutOffAndLaterAppendsFollowTheLastIntactRecord() throws {
        let url = directory.appendingPathComponent("journal")
        do {
            let (file, records, _) = try JournalFile.open(url)
            XCTAssertTrue(records.isEmpty)
            try file.append([1, 2, 3], sync: true)
            try file.append(Array(repeating: 7, count: 1000), sync: false)
        }
        // A crash in the middle of the next append: its frame is cut short.
        var bytes = [UInt8](try Data(contentsOf: url))
        let intact = bytes.count
        bytes += [10, 0, 0, 0, 0xDE, 0xAD]
        try Data(bytes).write(to: url)
        do {
            let (file, records, discarded) = try JournalFile.open(url)
            XCTAssertEqual(records, [[1, 2, 3], Array(repeating: 7, count: 1000)])
            XCTAssertEqual(discarded, 6)
            try file.append([4], sync: false)
        }
        let (_, records, _) = try JournalFile.open(url)
        XCTAssertEqual(records, [[1, 2, 3], Array(repeating: 7, count: 1000), [4]])

        // A flipped bit in the second record: it and everything after it are dropped, the first is kept.
        bytes = [UInt8](try Data(contentsOf: url))
        bytes[intact - 10] ^= 0x01
        try Data(bytes).write(to: url)
        let (_, damaged, cut) = try JournalFile.open(url)
        XCTAssertEqual(damaged, [[1, 2, 3]])
        XCTAssertGreaterThan(cut, 1000)
    }

    func testReplayKeepsUnfinishedBatchesTheirFinishedItemsAndCancellations() throws {
        let records: [JournalRecord] = [
            .started(coordinatorID: "c1", incarnation: 1, unixMilliseconds: 0),
            .batchAccepted(batchID: "b-done", client: [1], submit: submit(1), unixMilliseconds: 1),
            .batchAccepted(
                batchID: "b-open", client: [2], submit: submit(3), unixMilliseconds: 2,
                ownerKey: "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7"),
            .itemFinished(
                ItemFinished(
                    batchID: "b-done", itemIndex: 0, outcome: .failure(TaskFailure(code: .download, message: "404")))),
            .itemFinished(
                ItemFinished(
                    batchID: "b-open", itemIndex: 2, outcome: .output(TaskOutput(data: [], mediaType: "image/png")))),
            .batchCancelled(CancelBatch(batchID: "b-open", itemIndexes: [1])),
            .itemFinished(ItemFinished(batchID: "b-unknown", itemIndex: 0, outcome: .output(TaskOutput(data: [])))),
            .itemFinished(ItemFinished(batchID: "b-open", itemIndex: 99, outcome: .output(TaskOutput(data: [])))),
            .started(coordinatorID: "c2", incarnation: 2, unixMilliseconds: 3),
            .batchRetired(batchID: "b-done"),
        ]
        let state = RecoveredState(replaying: records.map(JournalCodec.encode) + [[0xFF, 0x00]])
        XCTAssertEqual(state.incarnation, 3)
        XCTAssertEqual(state.batches.map(\.batchID), ["b-open"])
        XCTAssertEqual(state.batches.first?.finished.keys.sorted(), [2])
        XCTAssertEqual(state.batches.first?.cancellations, [CancelBatch(batchID: "b-open", itemIndexes: [1])])
        XCTAssertEqual(state.batches.first?.client, [2])
        XCTAssertEqual(state.skippedRecords, 3, "the undecodable record and the two naming no known item")
        // Compaction keeps exactly what rebuilds the same state.
        let again = RecoveredState(replaying: state.compactRecords.map(JournalCodec.encode))
        XCTAssertEqual(again.batches.map(\.batchID), ["b-open"])
        XCTAssertEqual(again.batches.first?.finished, state.batches.first?.finished)
        XCTAssertEqual(again.batches.first?.acceptedUnixMilliseconds, 2)
        XCTAssertEqual(
            again.batches.first?.ownerKey, "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7",
            "the batch's owner survives compaction, so a second restart keeps it too")
    }

    func testReplayKeepsEachItemsFailedAttemptsAndCompactionKeepsThem() {
        func attempt(_ number: UInt32, _ code: FailureCode, worker: String) -> AttemptStatus {
            AttemptStatus(
                task: "download", attempt: number, code: code, error: "x", isTransient: true, retried: number == 1,
                worker: worker, failedUnixMilliseconds: 1_795_000_000_000 + UInt64(number))
        }
        let records: [JournalRecord] = [
            .batchAccepted(batchID: "b-1", client: [1], submit: submit(3), unixMilliseconds: 1),
            .attemptFailed(batchID: "b-1", itemIndex: 1, attempt: attempt(1, .workerLost, worker: "w-1")),
            .attemptFailed(batchID: "b-1", itemIndex: 2, attempt: attempt(1, .download, worker: "w-2")),
            .attemptFailed(batchID: "b-1", itemIndex: 1, attempt: attempt(2, .workerLost, worker: "w-3")),
            .itemFinished(
                ItemFinished(
                    batchID: "b-1", itemIndex: 1, outcome: .failure(TaskFailure(code: .workerLost, message: "lost")))),
            .attemptFailed(batchID: "b-gone", itemIndex: 0, attempt: attempt(1, .download, worker: "w-1")),
        ]
        let state = RecoveredState(replaying: records.map(JournalCodec.encode))
        XCTAssertEqual(state.skippedRecords, 0, "an attempt of a batch retired meanwhile is let go, not damage")
        let batch = state.batches.first
        XCTAssertEqual(batch?.failedAttempts[1]?.map(\.worker), ["w-1", "w-3"], "oldest first")
        XCTAssertEqual(batch?.failedAttempts[2]?.map(\.code), [.download])
        let again = RecoveredState(replaying: state.compactRecords.map(JournalCodec.encode))
        XCTAssertEqual(again.batches.first?.failedAttempts, batch?.failedAttempts)

        // Restored: a finished item's attempts are its batch's, for status.
        var registry = BatchRegistry(
            limits: BatchRegistry.Limits(maxBatchItems: 10, maxPendingItemsPerClient: 10), keepsResults: true)
        guard let saved = state.batches.first else { return XCTFail("the batch is restored") }
        let planned = registry.plan(batchID: "b-1", client: PeerIdentity([1]), submit: saved.submit, recovered: saved)
        XCTAssertEqual(planned.failedAttempts(of: 1).map(\.attempt), [1, 2])
        XCTAssertTrue(planned.failedAttempts(of: 2).isEmpty, "an unfinished item's attempts go to its operations")
    }

    func testReplayedExpansionsAddItemsAndCountTheirManifestAsFinished() {
        let added = ItemsAdded(
            batchID: "b-1", parentIndex: 0, firstIndex: 2,
            items: [
                BatchItem(source: "https://example.com/x.jpg", outputName: "x"),
                BatchItem(source: "https://example.com/y.jpg", outputName: "y"),
            ])
        let records: [JournalRecord] = [
            .batchAccepted(batchID: "b-1", client: [1], submit: submit(2), unixMilliseconds: 1),
            .itemsAdded(added),
            .itemsAdded(ItemsAdded(batchID: "b-1", parentIndex: 0, firstIndex: 9, items: [BatchItem(source: "z.jpg")])),
            .itemFinished(ItemFinished(batchID: "b-1", itemIndex: 3, outcome: .output(TaskOutput(data: [])))),
        ]
        let state = RecoveredState(replaying: records.map(JournalCodec.encode))
        let batch = state.batches.first
        XCTAssertEqual(batch?.allItems.map(\.outputName), ["0", "1", "x", "y"])
        XCTAssertEqual(batch?.finished.keys.sorted(), [0, 3], "the manifest (0) expanded; item 3 finished")
        XCTAssertEqual(state.skippedRecords, 1, "an expansion that does not follow the last item is damage")
        XCTAssertEqual(batch?.isComplete, false)
        let again = RecoveredState(replaying: state.compactRecords.map(JournalCodec.encode))
        XCTAssertEqual(again.batches.first?.allItems, batch?.allItems)
        XCTAssertEqual(again.batches.first?.finished.keys.sorted(), [0, 3])
    }

    func testOpeningRecordsEachStartAndServesStoredOutputs() throws {
        do {
            let (journal, first) = try Journal.open(directory: directory, coordinatorID: "c1")
            XCTAssertEqual(first.incarnation, 1)
            try journal.recordAccepted(batchID: "b-1", client: [9], submit: submit(2))
            try journal.recordFinished(
                ItemFinished(
                    batchID: "b-1", itemIndex: 1, outputName: "1",
                    outcome: .output(TaskOutput(data: [1, 2, 3], mediaType: "image/jpeg", width: 1, height: 1))))
            XCTAssertEqual(try journal.storedOutput(batchID: "b-1", itemIndex: 1), [1, 2, 3])
        }
        do {
            let (journal, second) = try Journal.open(directory: directory, coordinatorID: "c2")
            XCTAssertEqual(second.incarnation, 2)
            let batch = try XCTUnwrap(second.batches.first)
            guard case .output(let output)? = batch.finished[1]?.outcome else {
                return XCTFail("item 1 should be recorded as a success")
            }
            XCTAssertEqual(output.data, [], "the journal keeps no image bytes")
            XCTAssertEqual(output.mediaType, "image/jpeg")
            XCTAssertEqual(try journal.storedOutput(batchID: "b-1", itemIndex: 1), [1, 2, 3])
        }
        do {
            // An output file that went missing makes its item run again rather than be served empty.
            try FileManager.default.removeItem(at: directory.appendingPathComponent("results/b-1/1"))
            let (journal, third) = try Journal.open(directory: directory, coordinatorID: "c3")
            XCTAssertEqual(third.batches.first?.finished.count, 0)
            // Retiring removes the batch and its results for good.
            try journal.recordRetired(batchID: "b-1")
        }
        let (_, fourth) = try Journal.open(directory: directory, coordinatorID: "c4")
        XCTAssertTrue(fourth.batches.isEmpty)
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory.appendingPathComponent("results/b-1").path))
    }

    func testASecondCoordinatorOnTheSameDirectoryIsRefused() throws {
        let (journal, _) = try Journal.open(directory: directory, coordinatorID: "c1")
        XCTAssertThrowsError(try Journal.open(directory: directory, coordinatorID: "c2")) { error in
            XCTAssertTrue("\(error)".contains("another coordinator is using the data directory"), "\(error)")
        }
        withExtendedLifetime(journal) {}
    }

    func testAnUnwritableDataDirectorySaysSo() {
        XCTAssertThrowsError(
            try Journal.open(directory: URL(fileURLWithPath: "/proc/shiftwork-cannot-be-here"), coordinatorID: "c")
        ) { error in
            XCTAssertTrue("\(error)".contains("--data-dir"), "\(error)")
        }
    }
}
