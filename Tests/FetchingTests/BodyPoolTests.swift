import Foundation
import ShiftworkTestSupport
import XCTest

@testable import Fetching

final class BodyPoolTests: XCTestCase {
    private static func address(_ body: [UInt8]) -> UInt {
        body.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) }
    }

    func testABodyNoOneHoldsAnyMoreComesBackEmptyWithItsStorage() throws {
        let pool = BodyPool(skippedYoungest: 0)
        var delivered = [UInt8](repeating: 9, count: 1 << 20)
        let storage = Self.address(delivered)
        pool.park(delivered)
        delivered = []  // the consumer lets it go
        XCTAssertEqual(delivered.count, 0)
        let taken = try XCTUnwrap(pool.take(capacity: 1 << 20))
        XCTAssertTrue(taken.isEmpty)
        XCTAssertGreaterThanOrEqual(taken.capacity, 1 << 20)
        XCTAssertEqual(Self.address(taken), storage, "the same storage, not a fresh one")
        XCTAssertEqual(pool.counts, BodyPool.Counts(reused: 1, held: 0))
        XCTAssertEqual(pool.count, 0)
        XCTAssertEqual(pool.parkedBytes, 0)
    }

    func testABodyStillHeldIsNeverReused() {
        let pool = BodyPool(skippedYoungest: 0)
        let held = [UInt8](repeating: 7, count: 64 << 10)  // e.g. in the input cache, or being decoded
        pool.park(held)
        XCTAssertNil(pool.take(capacity: 1_000), "held elsewhere: the caller makes a fresh body")
        XCTAssertEqual(held.count, 64 << 10)
        XCTAssertTrue(held.allSatisfy { $0 == 7 }, "the holder's bytes are untouched")
        XCTAssertEqual(pool.counts, BodyPool.Counts(reused: 0, held: 1))
        XCTAssertEqual(pool.count, 0, "a body found held leaves the pool")
    }

    func testOnlyABodyLargeEnoughIsTaken() throws {
        let pool = BodyPool(skippedYoungest: 0)
        pool.park([UInt8](repeating: 1, count: 1_000))
        pool.park([UInt8](repeating: 2, count: 50_000))
        let large = try XCTUnwrap(pool.take(capacity: 40_000))
        XCTAssertGreaterThanOrEqual(large.capacity, 40_000)
        XCTAssertNil(pool.take(capacity: 40_000), "the small one is left")
        XCTAssertEqual(pool.count, 1)
        XCTAssertNil(pool.take(capacity: 0), "an empty body needs no storage")
    }

    func testBoundedByCountAndBytesTheOldestGoingFirst() throws {
        let pool = BodyPool(maxBuffers: 3, maxBytes: 100_000, skippedYoungest: 0)
        var addresses: [UInt] = []
        for _ in 0..<5 {
            let body = [UInt8](repeating: 3, count: 10_000)
            addresses.append(Self.address(body))
            pool.park(body)
        }
        XCTAssertEqual(pool.count, 3)
        XCTAssertLessThanOrEqual(pool.parkedBytes, 3 * 20_000)
        let oldestKept = try XCTUnwrap(pool.take(capacity: 10_000))
        XCTAssertEqual(Self.address(oldestKept), addresses[2], "the two oldest went")

        pool.park([UInt8](repeating: 4, count: 200_000))
        XCTAssertEqual(pool.count, 2, "a body over the byte bound is not kept")
        for _ in 0..<3 { pool.park([UInt8](repeating: 5, count: 45_000)) }
        XCTAssertLessThanOrEqual(pool.parkedBytes, 100_000)
        XCTAssertEqual(pool.count, 2, "bytes bound the pool before the count does")

        pool.releaseAll()
        XCTAssertEqual(pool.count, 0)
        XCTAssertEqual(pool.parkedBytes, 0)
        XCTAssertNil(pool.take(capacity: 1))
    }

    func testTheYoungestParkedBodiesAreLeftAlone() throws {
        let pool = BodyPool(skippedYoungest: 2)
        var addresses: [UInt] = []
        for _ in 0..<3 {
            let body = [UInt8](repeating: 6, count: 4_096)
            addresses.append(Self.address(body))
            pool.park(body)
        }
        let oldest = try XCTUnwrap(pool.take(capacity: 4_096))
        XCTAssertEqual(Self.address(oldest), addresses[0])
        XCTAssertNil(pool.take(capacity: 4_096), "the two youngest are not taken")
        XCTAssertEqual(pool.count, 2)
    }

    /// Through the download loop: each delivered body is parked; a later download reuses the storage of
    /// one its holder let go (once it is older than the youngest the pool leaves alone), and never takes
    /// the storage of one still held, nor changes its bytes.
    func testDownloadsReuseABodyOnlyOnceItIsLetGo() async throws {
        let server = try TestHTTPServer()
        defer { server.shutdown() }
        let first = [UInt8]((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        let second = [UInt8]((0..<250_000).map { UInt8(truncatingIfNeeded: $0 &* 13) })
        server.serve(path: "/first", body: first)
        server.serve(path: "/second", body: second)
        let downloader = HTTPDownloader(configuration: FetchConfiguration())
        defer { Task { await downloader.shutdown() } }

        let held = try await downloader.download(server.url("/first"), deadline: nil)
        XCTAssertEqual(held, first)
        // The first body stays held; each later one is let go at once.
        let skipped = BodyPool().skippedYoungest
        var addresses: [UInt] = []
        for _ in 0..<(skipped + 2) {
            let body = try await downloader.download(server.url("/second"), deadline: nil)
            XCTAssertEqual(body, second)
            addresses.append(Self.address(body))
        }
        XCTAssertFalse(addresses.contains(Self.address(held)), "a held body's storage is never taken")
        XCTAssertEqual(held, first, "a held body's bytes never change")
        // The first is passed over (held); the next download reuses the oldest let go.
        XCTAssertEqual(addresses.last, addresses.first, "the storage the first body let go came back")
        XCTAssertEqual(Set(addresses.dropLast()).count, skipped + 1, "fresh bodies until then")
    }
}
