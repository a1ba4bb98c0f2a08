import Wire
import XCTest

@testable import Cluster

/// The coordinator's credit for uploaded files (`UploadWindow`), event by event: what it asks of whom,
/// within how many bytes, and what it does with the bytes that come (docs/protocol.md, "Uploads").
final class UploadWindowTests: XCTestCase {
    private let client = PeerIdentity(Array("client-1".utf8))
    private let other = PeerIdentity(Array("client-2".utf8))

    private func files(_ sizes: [UInt64]) -> [(index: Int, metadata: UploadMetadata, path: String)] {
        sizes.enumerated().map {
            (
                index: $0.offset, metadata: UploadMetadata(size: $0.element, modifiedUnixNanoseconds: 7),
                path: "/p/\($0.offset).jpg"
            )
        }
    }

    private func asks(_ decisions: [UploadWindow.Decision]) -> [(PeerIdentity, UploadRequest)] {
        decisions.compactMap { if case .ask(let peer, let request) = $0 { (peer, request) } else { nil } }
    }

    private func asked(_ decisions: [UploadWindow.Decision]) -> [Int] {
        asks(decisions).flatMap { $0.1.items.map { Int($0.itemIndex) } }
    }

    private func data(_ index: Int, size: Int, batch: String = "b1") -> (UploadData, UInt32) {
        let bytes = [UInt8](repeating: UInt8(index & 0xFF), count: size)
        let crc = CRC32C.checksum(bytes)
        return (UploadData(batchID: batch, itemIndex: UInt32(index), data: bytes, crc32c: crc), crc)
    }

    func testItAsksOnlyWhatFitsTheWindowAndMoreAsItemsFinish() throws {
        var window = UploadWindow(limitBytes: 100, spools: false)
        let first = window.add(batchID: "b1", items: files([40, 40, 40, 40]), client: client)
        XCTAssertEqual(asked(first), [0, 1], "two files of 40 fit a window of 100, three do not")
        let request = try XCTUnwrap(asks(first).first)
        XCTAssertEqual(request.0, client)
        XCTAssertEqual(request.1.creditBytes, 80)
        XCTAssertEqual(request.1.awaitingItems, 4)
        XCTAssertEqual(request.1.items.first?.path, "/p/0.jpg")
        XCTAssertEqual(request.1.items.first?.expected, UploadMetadata(size: 40, modifiedUnixNanoseconds: 7))

        let (upload, crc) = data(0, size: 40)
        let received = try XCTUnwrap(window.received(upload, crc32c: crc, from: client))
        XCTAssertEqual(asked(received), [], "held bytes count against the window until the item finishes")
        XCTAssertEqual(window.state(of: .init(batchID: "b1", index: 0)), .held)
        XCTAssertEqual(window.want(.init(batchID: "b1", index: 0)), [.ready(.init(batchID: "b1", index: 0))])
        let input = try XCTUnwrap(window.input(for: .init(batchID: "b1", index: 0)))
        XCTAssertEqual(input.data, upload.data)
        XCTAssertEqual(input.crc32c, crc)
        XCTAssertEqual(input.fromTaskID, "b1/0/upload")

        let released = window.release(.init(batchID: "b1", index: 0))
        XCTAssertEqual(asked(released), [2], "the finished item's room goes to the next file")
        XCTAssertEqual(window.askedBytes + window.heldBytes, 80)
    }

    func testAFileLargerThanTheWindowIsAskedForAloneWhenNothingElseIsHeld() throws {
        var window = UploadWindow(limitBytes: 100, spools: false)
        XCTAssertEqual(asked(window.add(batchID: "b1", items: files([30, 500, 30]), client: client)), [0])
        let (upload, crc) = data(0, size: 30)
        XCTAssertEqual(asked(try XCTUnwrap(window.received(upload, crc32c: crc, from: client))), [])
        XCTAssertEqual(asked(window.release(.init(batchID: "b1", index: 0))), [1], "alone: nothing else is held")
        XCTAssertEqual(window.askedBytes, 500)
    }

    func testBytesAreTakenOnlyFromTheConnectionAskedAndOnlyOnce() throws {
        var window = UploadWindow(limitBytes: 100, spools: false)
        _ = window.add(batchID: "b1", items: files([10, 10]), client: client)
        let (upload, crc) = data(0, size: 10)
        XCTAssertNil(window.received(upload, crc32c: crc, from: other), "another client's bytes are dropped")
        XCTAssertNil(
            window.received(UploadData(batchID: "b9", itemIndex: 0, data: [1]), crc32c: 0, from: client),
            "an unknown batch")
        XCTAssertNil(
            window.received(UploadData(batchID: "b1", itemIndex: 7, data: [1]), crc32c: 0, from: client),
            "an item never asked for")
        XCTAssertNotNil(window.received(upload, crc32c: crc, from: client))
        XCTAssertNil(window.received(upload, crc32c: crc, from: client), "the same item twice")
    }

    func testAChangedFileOrAClientsFailureFailsThatItemOnly() throws {
        var window = UploadWindow(limitBytes: 100, spools: false)
        _ = window.add(batchID: "b1", items: files([10, 10, 10]), client: client)
        let short = UploadData(batchID: "b1", itemIndex: 0, data: [1, 2, 3], crc32c: CRC32C.checksum([1, 2, 3]))
        let failed = try XCTUnwrap(window.received(short, crc32c: CRC32C.checksum([1, 2, 3]), from: client))
        guard case .fail(let item, let message)? = failed.first else { return XCTFail("\(failed)") }
        XCTAssertEqual(item.index, 0)
        XCTAssertTrue(message.contains("/p/0.jpg") && message.contains("3 bytes came, not the 10"), message)

        var (corrupt, _) = data(1, size: 10)
        corrupt.crc32c ^= 1
        let mismatch = try XCTUnwrap(window.received(corrupt, crc32c: CRC32C.checksum(corrupt.data), from: client))
        guard case .fail(_, let why)? = mismatch.first else { return XCTFail("\(mismatch)") }
        XCTAssertTrue(why.contains("CRC-32C"), why)

        let gone = UploadData(batchID: "b1", itemIndex: 2, failure: "/p/2.jpg vanished since it was submitted")
        let vanished = try XCTUnwrap(window.received(gone, crc32c: 0, from: client))
        XCTAssertEqual(
            vanished.first, .fail(.init(batchID: "b1", index: 2), "/p/2.jpg vanished since it was submitted"))
        XCTAssertEqual(window.askedBytes, 0)
        XCTAssertEqual(window.awaitingCount(of: "b1"), 0, "failed items are no longer awaited (nor asked again)")
    }

    func testAClientThatAttachesIsAskedAgainForWhatTheOneGoneHadNotSent() throws {
        var window = UploadWindow(limitBytes: 100, spools: false)
        XCTAssertEqual(asked(window.add(batchID: "b1", items: files([30, 30, 30, 30]), client: client)), [0, 1, 2])
        let (upload, crc) = data(1, size: 30)
        _ = window.received(upload, crc32c: crc, from: client)
        let again = window.attach("b1", client: other)
        XCTAssertEqual(asks(again).map(\.0), [other])
        XCTAssertEqual(asked(again), [0, 2], "what was asked and not received; the held item is kept")
        XCTAssertNil(window.received(data(0, size: 30).0, crc32c: data(0, size: 30).1, from: client), "the old one")
        XCTAssertNotNil(window.received(data(0, size: 30).0, crc32c: data(0, size: 30).1, from: other))
    }

    func testARestartedCoordinatorWaitsForAClientToAttachBeforeAsking() {
        var window = UploadWindow(limitBytes: 100, spools: false)
        XCTAssertEqual(window.add(batchID: "b1", items: files([10, 10]), client: nil), [], "no one to ask")
        XCTAssertEqual(window.awaitingCount(of: "b1"), 2, "the items wait, never failed")
        XCTAssertEqual(asked(window.attach("b1", client: client)), [0, 1])
    }

    func testWithASpoolReceivedBytesLeaveMemoryAndAreReadBackWhenWanted() throws {
        var window = UploadWindow(limitBytes: 100, spools: true)
        XCTAssertEqual(asked(window.add(batchID: "b1", items: files([60, 60, 60]), client: client)), [0])
        let (upload, crc) = data(0, size: 60)
        let received = try XCTUnwrap(window.received(upload, crc32c: crc, from: client))
        XCTAssertEqual(received.first, .spool(.init(batchID: "b1", index: 0), upload.data, crc32c: crc))
        XCTAssertEqual(asked(received), [1], "asked bytes are the only bound on asking with a spool")
        XCTAssertEqual(window.awaitingCount(of: "b1"), 3, "not kept until written")
        XCTAssertEqual(asked(window.spoolWritten(.init(batchID: "b1", index: 0))), [])
        XCTAssertEqual(window.heldBytes, 0)
        XCTAssertEqual(window.awaitingCount(of: "b1"), 2)

        let wanted = window.want(.init(batchID: "b1", index: 0))
        XCTAssertEqual(wanted, [.load(.init(batchID: "b1", index: 0), size: 60)])
        XCTAssertEqual(
            window.loaded(.init(batchID: "b1", index: 0), bytes: upload.data, crc32c: crc),
            [.ready(.init(batchID: "b1", index: 0))])
        XCTAssertNotNil(window.input(for: .init(batchID: "b1", index: 0)))

        // The last two come; once both are on disk the client hears that nothing is awaited (detach).
        for index in [1, 2] {
            let (more, moreCRC) = data(index, size: 60)
            _ = window.received(more, crc32c: moreCRC, from: client)
        }
        _ = window.spoolWritten(.init(batchID: "b1", index: 1))
        let done = window.spoolWritten(.init(batchID: "b1", index: 2))
        XCTAssertEqual(asks(done).map(\.1.awaitingItems), [0])
        XCTAssertEqual(asks(done).map(\.1.spooled), [true])
        XCTAssertEqual(
            window.release(.init(batchID: "b1", index: 0)), [.unspool(.init(batchID: "b1", index: 0))])
        XCTAssertEqual(window.heldBytes, 0)
    }

    func testASpoolFileLostAfterARestartIsAskedOfTheClientAgain() {
        var window = UploadWindow(limitBytes: 100, spools: true)
        _ = window.add(batchID: "b1", items: files([10, 10]), client: nil, spooled: [0, 1])
        XCTAssertEqual(window.awaitingCount(of: "b1"), 0)
        XCTAssertEqual(window.want(.init(batchID: "b1", index: 1)), [.load(.init(batchID: "b1", index: 1), size: 10)])
        XCTAssertEqual(window.loadFailed(.init(batchID: "b1", index: 1)), [], "no client to ask yet")
        XCTAssertEqual(window.awaitingCount(of: "b1"), 1)
        XCTAssertEqual(asked(window.attach("b1", client: client)), [1])
    }

    func testForgettingABatchReleasesEverythingItHeld() throws {
        var window = UploadWindow(limitBytes: 100, spools: false)
        _ = window.add(batchID: "b1", items: files([50, 50]), client: client)
        _ = window.received(data(0, size: 50).0, crc32c: data(0, size: 50).1, from: client)
        XCTAssertEqual(asked(window.add(batchID: "b2", items: files([50]), client: other)), [])
        let forgotten = window.forget("b1")
        XCTAssertEqual(asks(forgotten).map(\.0), [other], "the room goes to the next batch")
        XCTAssertEqual(window.askedBytes, 50)
        XCTAssertEqual(window.heldBytes, 0)
    }

    func testBytesTheSpoolCannotTakeStayInMemoryAndTheClientIsNotAskedAgain() throws {
        var window = UploadWindow(limitBytes: 100, spools: true)
        _ = window.add(batchID: "b1", items: files([10]), client: client)
        let item = UploadWindow.Item(batchID: "b1", index: 0)
        XCTAssertEqual(window.want(item), [])
        let (upload, crc) = data(0, size: 10)
        _ = try XCTUnwrap(window.received(upload, crc32c: crc, from: client))
        XCTAssertEqual(window.spoolFailed(item), [.ready(item)], "held in memory instead")
        XCTAssertEqual(window.input(for: item)?.data, upload.data)
        XCTAssertEqual(window.heldBytes, 10)
        XCTAssertEqual(window.release(item), [.unspool(item)])
        XCTAssertEqual(window.heldBytes, 0)
    }
}
