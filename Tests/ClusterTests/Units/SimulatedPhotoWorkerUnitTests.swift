import ClusterSimulation
import Imaging
import Wire
import XCTest

/// `SimulatedPhotoWorker` on its own: the figures of a simulated 12 MP photo, and the held downloads it
/// tracks as a real worker's input cache does (`SimulatedPhotoWorkerTests` holds its answers to a real worker's).
final class SimulatedPhotoWorkerUnitTests: XCTestCase {
    private let sink = "/shared/out"

    func testATwelveMegapixelPhotoHasItsOwnRepeatableFigures() {
        let first = SimulatedPhoto.twelveMegapixel(source: "http://127.0.0.1:9/photo-1.jpg")
        let second = SimulatedPhoto.twelveMegapixel(source: "http://127.0.0.1:9/photo-2.jpg")
        XCTAssertEqual(first, SimulatedPhoto.twelveMegapixel(source: "http://127.0.0.1:9/photo-1.jpg"))
        XCTAssertNotEqual(first.outputCRC32C, second.outputCRC32C)
        for photo in [first, second] {
            XCTAssertEqual(photo.width * photo.height, 12_000_000)
            XCTAssertTrue((5_500_000..<6_500_000).contains(photo.downloadBytes), "\(photo)")
            XCTAssertTrue((900_000..<1_100_000).contains(photo.outputBytes), "\(photo)")
            XCTAssertEqual(photo.mediaType, "image/jpeg")
        }
    }

    func testADownloadIsHeldUntilItsTiltShiftTakesIt() throws {
        var worker = SimulatedPhotoWorker()
        let source = "http://127.0.0.1:9/photo-7.jpg"
        let photo = SimulatedPhoto.twelveMegapixel(source: source)
        let assignments = SimulatedPhotoWorkerTests.photoAssignments(source: source, sink: sink)
        let download = worker.answer(assignments[0])
        XCTAssertEqual(
            download,
            TaskResult(
                taskID: assignments[0].taskID, attempt: 1,
                outcome: .output(
                    TaskOutput(heldOnWorker: true, size: photo.downloadBytes, mediaType: "image/jpeg")), taskKey: 1))
        XCTAssertEqual(worker.heldCount, 1)
        let tiltShift = worker.answer(assignments[1])
        XCTAssertEqual(
            tiltShift.outcome,
            .output(
                TaskOutput(
                    location: "/shared/out/photo-0.jpg", size: photo.outputBytes, crc32c: photo.outputCRC32C,
                    mediaType: "image/jpeg", width: 4000, height: 3000)))
        XCTAssertEqual(worker.heldCount, 0)
        // Taken once: the same tilt-shift again (a retry) finds no input, as on a real worker.
        guard case .failure(let again) = worker.answer(assignments[1]).outcome else { return XCTFail("answered twice") }
        XCTAssertEqual(again.code, .inputMissing)
    }

    func testAWelcomeForgetsTheHeldDownloads() {
        var worker = SimulatedPhotoWorker()
        let assignments = SimulatedPhotoWorkerTests.photoAssignments(
            source: "http://127.0.0.1:9/photo-3.jpg", sink: sink)
        _ = worker.answer(assignments[0])
        worker.forgetAll()
        guard case .failure(let failure) = worker.answer(assignments[1]).outcome else {
            return XCTFail("held after a welcome")
        }
        XCTAssertEqual(failure.code, .inputMissing)
    }

    func testWithoutASinkTheOutputTravelsInTheAskedFormat() {
        var worker = SimulatedPhotoWorker(unsunkOutputBytes: 1000)
        var assignments = SimulatedPhotoWorkerTests.photoAssignments(source: "http://127.0.0.1:9/photo-4.jpg", sink: "")
        assignments[1].parameters?.outputFormat = .png
        _ = worker.answer(assignments[0])
        guard case .output(let output) = worker.answer(assignments[1]).outcome else { return XCTFail("failed") }
        XCTAssertEqual(output.data.count, 1000)
        XCTAssertEqual(output.mediaType, ImageFormat.png.mediaType)
        XCTAssertEqual([output.width, output.height], [4000, 3000])
        XCTAssertTrue(output.location.isEmpty)
    }

    func testADownloadNotKeptOnTheWorkerIsRefusedAsNotSimulated() {
        var worker = SimulatedPhotoWorker()
        var download = SimulatedPhotoWorkerTests.photoAssignments(source: "http://127.0.0.1:9/photo-5.jpg", sink: sink)[
            0]
        download.keepOutput = false
        guard case .failure(let failure) = worker.answer(download).outcome else {
            return XCTFail("simulated the bytes")
        }
        XCTAssertTrue(failure.message.contains("keepOutput"), failure.message)
        XCTAssertEqual(worker.heldCount, 0)
    }

    func testAChainedDownloadIsAnsweredThenItsTiltShiftEachAloneByDefault() {
        let source = "http://127.0.0.1:9/photo-8.jpg"
        let download = SimulatedPhotoWorkerTests.chainedDownload(source: source, sink: sink)
        var chained = SimulatedPhotoWorker()
        XCTAssertEqual(chained.chaining, .on, "a real worker's default")
        var twoStep = SimulatedPhotoWorker(chaining: .off)
        let apart = SimulatedPhotoWorkerTests.photoAssignments(source: source, sink: sink)
        // The same two results as the two-step flow's, each in a message of its own, nothing left held.
        XCTAssertEqual(chained.messages(answering: download), [[twoStep.answer(apart[0])], [twoStep.answer(apart[1])]])
        XCTAssertEqual(chained.heldCount, 0)
    }

    func testTogetherSendsBothResultsInOneMessageWhenTheCoordinatorTakesBatches() {
        let download = SimulatedPhotoWorkerTests.chainedDownload(source: "http://127.0.0.1:9/photo-9.jpg", sink: sink)
        var together = SimulatedPhotoWorker(chaining: .together)
        let messages = together.messages(answering: download)
        XCTAssertEqual(messages.map(\.count), [2])
        XCTAssertEqual(messages.joined().map(\.taskKey), download.followOn.map { [download.taskKey, $0.taskKey] })
        // A coordinator that takes no batch messages gets each result alone, as from a real worker.
        var older = SimulatedPhotoWorker(chaining: .together)
        XCTAssertEqual(older.messages(answering: download, coordinatorAcceptsBatches: false).map(\.count), [1, 1])
    }

    func testAFailedDownloadsChainedTiltShiftIsNeitherRunNorAnswered() {
        var download = SimulatedPhotoWorkerTests.chainedDownload(source: "http://127.0.0.1:9/photo-10.jpg", sink: sink)
        download.keepOutput = false
        var worker = SimulatedPhotoWorker(chaining: .together)
        let messages = worker.messages(answering: download)
        XCTAssertEqual(messages.count, 1)
        guard let only = messages.first, only.count == 1, case .failure = only[0].outcome else {
            return XCTFail("answered more than the failed download: \(messages)")
        }
    }

    func testAnAssignmentWithoutAFollowOnIsOneMessage() {
        var worker = SimulatedPhotoWorker(chaining: .together)
        let download = SimulatedPhotoWorkerTests.photoAssignments(
            source: "http://127.0.0.1:9/photo-11.jpg", sink: sink)[0]
        XCTAssertEqual(worker.messages(answering: download).map(\.count), [1])
        XCTAssertEqual(worker.heldCount, 1)
    }

    func testAChainedDownloadIsTwoRunsOneAfterTheOtherInItsSlot() throws {
        let download = SimulatedPhotoWorkerTests.chainedDownload(source: "http://127.0.0.1:9/photo-12.jpg", sink: sink)
        let followOn = try XCTUnwrap(download.followOn)
        for chaining in [PhotoChaining.on, .together, .off] {
            var byRuns = SimulatedPhotoWorker(chaining: chaining)
            var byMessages = SimulatedPhotoWorker(chaining: chaining)
            let runs = byRuns.runs(answering: download)
            XCTAssertEqual(runs.map(\.taskKey), [download.taskKey, followOn.taskKey], "\(chaining)")
            XCTAssertEqual(
                Array(runs.map(\.messagesAtEnd).joined()), byMessages.messages(answering: download), "\(chaining)")
            // Held back with `together`: the download's run ends with no message.
            XCTAssertEqual(runs.map(\.messagesAtEnd.count), chaining == .together ? [0, 1] : [1, 1], "\(chaining)")
        }
        var unchained = SimulatedPhotoWorker()
        let alone = SimulatedPhotoWorkerTests.photoAssignments(source: "http://127.0.0.1:9/photo-13.jpg", sink: sink)[0]
        XCTAssertEqual(unchained.runs(answering: alone).map(\.taskKey), [alone.taskKey])
    }

    func testTheChainingSettingsAreNamedAsTheRealWorkersEnvironmentNamesThem() {
        XCTAssertEqual(
            PhotoChaining.allCases.compactMap { PhotoChaining(named: $0.rawValue.uppercased()) }, PhotoChaining.allCases
        )
        XCTAssertNil(PhotoChaining(named: "sometimes"))
        XCTAssertEqual(PhotoChaining.allCases.map(\.announced), [false, true, true])
    }
}
