import Wire
import XCTest

@testable import Cluster

/// Uploaded files in the core, event by event without sockets: the credit asked of the client, the
/// bytes injected into the tilt-shift (no download), a client's failure failing that item only, the room
/// of a finished item going to the next file, and a lost worker's item sent again with the same bytes.
final class CoordinatorCoreUploadTests: XCTestCase {
    private typealias F = CoreFixtures

    private func uploads(_ sizes: [UInt64], retries: UInt32 = 0) -> SubmitBatch {
        SubmitBatch(
            requestID: "r",
            items: sizes.enumerated().map {
                BatchItem(
                    source: "/home/ana/\($0.offset).jpg", outputName: "o\($0.offset)",
                    upload: UploadMetadata(size: $0.element, modifiedUnixNanoseconds: 1))
            },
            retries: retries)
    }

    private func requests(_ effects: [CoreEffect]) -> [UploadRequest] {
        effects.sent.compactMap { if case .uploadRequest(let request) = $0.message { request } else { nil } }
    }

    private func data(_ index: Int, size: Int) -> UploadData {
        let bytes = [UInt8](repeating: UInt8(index + 1), count: size)
        return UploadData(batchID: "b1", itemIndex: UInt32(index), data: bytes, crc32c: CRC32C.checksum(bytes))
    }

    private func driver() -> CoreDriver {
        var driver = CoreDriver()
        driver.core.uploads = UploadWindow(limitBytes: 100, spools: false)
        driver.handle(
            .workerHello(WorkerHello(workerID: "w1", slots: 4), from: MessageSender(identity: F.w1, key: nil)))
        return driver
    }

    func testTheClientIsAskedWithinTheWindowAndTheBytesGoToTheTiltShift() throws {
        var driver = driver()
        let accepted = driver.handle(.submit(uploads([40, 40, 40]), from: F.client, batchID: "b1"))
        XCTAssertEqual(accepted.assignments(), [], "nothing runs before its bytes are in")
        let asked = try XCTUnwrap(requests(accepted).first)
        XCTAssertEqual(asked.items.map(\.itemIndex), [0, 1], "two files of 40 in a window of 100")
        XCTAssertEqual(
            accepted.sent.first { if case .uploadRequest = $0.message { true } else { false } }?.peer, F.client.identity
        )

        let upload = data(0, size: 40)
        let sent = driver.handle(.uploadData(upload, from: F.client.identity)).assignments(to: F.w1)
        let assignment = try XCTUnwrap(sent.first)
        XCTAssertEqual(sent.count, 1)
        XCTAssertEqual(assignment.kind, .tiltShift, "no download: the client's bytes are the input")
        XCTAssertEqual(assignment.inputs.first?.data, upload.data)
        XCTAssertEqual(assignment.inputs.first?.crc32c, upload.crc32c)

        let finished = driver.handle(.results([.success(assignment, F.filtered)], from: F.w1))
        XCTAssertEqual(finished.finishedItems.map(\.itemIndex), [0])
        XCTAssertEqual(requests(finished).flatMap { $0.items.map(\.itemIndex) }, [2], "its room goes to the next file")
    }

    func testBytesFromAnotherClientAreDroppedAndAClientsFailureFailsThatItemOnly() throws {
        var driver = driver()
        driver.handle(.submit(uploads([10, 10]), from: F.client, batchID: "b1"))
        let stranger = driver.handle(.uploadData(data(0, size: 10), from: F.otherClient.identity))
        XCTAssertEqual(stranger.assignments(), [])
        XCTAssertTrue(stranger.contains { if case .upload(.dropped) = $0 { true } else { false } }, "counted")

        let failure = UploadData(
            batchID: "b1", itemIndex: 1, failure: "/home/ana/1.jpg vanished since it was submitted")
        let failed = driver.handle(.uploadData(failure, from: F.client.identity))
        guard case .failure(let why)? = failed.finishedItems.first?.outcome else { return XCTFail("\(failed)") }
        XCTAssertEqual(why.code, .upload)
        XCTAssertEqual(why.message, "/home/ana/1.jpg vanished since it was submitted")
        XCTAssertEqual(driver.handle(.uploadData(data(0, size: 10), from: F.client.identity)).assignments().count, 1)
    }

    func testAnItemLostWithItsWorkerIsSentAgainWithTheSameBytesWithoutAskingTheClient() throws {
        var driver = driver()
        driver.handle(.submit(uploads([10], retries: 2), from: F.client, batchID: "b1"))
        let upload = data(0, size: 10)
        let first = try XCTUnwrap(driver.handle(.uploadData(upload, from: F.client.identity)).assignments().first)
        let lost = driver.handle(.peerUnreachable(F.w1))
        XCTAssertEqual(requests(lost), [], "the coordinator holds the bytes: the client is not asked again")
        let (_, timer) = try XCTUnwrap(lost.timers.first)
        driver.handle(.timerFired(timer))
        let again = driver.handle(
            .workerHello(WorkerHello(workerID: "w2", slots: 1), from: MessageSender(identity: F.w2, key: nil)))
        let retried = try XCTUnwrap(again.assignments(to: F.w2).first)
        XCTAssertEqual(retried.taskKey, first.taskKey)
        XCTAssertGreaterThan(retried.attempt, first.attempt)
        XCTAssertEqual(retried.inputs.first?.data, upload.data)
    }

    func testAClientThatAttachesIsAskedForWhatAwaitsUpload() {
        var driver = driver()
        driver.handle(.submit(uploads([60, 60]), from: F.client, batchID: "b1"))
        let attached = driver.handle(.uploadsAttached(batchID: "b1", client: F.otherClient.identity))
        XCTAssertEqual(attached.sent.map(\.peer), [F.otherClient.identity])
        XCTAssertEqual(requests(attached).flatMap { $0.items.map(\.itemIndex) }, [0])
    }
}
