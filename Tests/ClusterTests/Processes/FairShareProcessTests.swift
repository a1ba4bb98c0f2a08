import Cluster
import Foundation
import Wire
import XCTest

/// Sharing the cluster through real processes: a coordinator and a worker (`shiftwork` processes), and
/// clients over TCP. A small batch submitted behind a large one finishes long before it under fair
/// share, and after it under FIFO (the comparison shows the test can fail).
final class FairShareProcessTests: ClusterTestCase {
    /// The order in which the items of two batches finished, as the client saw it: "big" or "small".
    private func finishOrder(scheduling: String) async throws -> [String] {
        let endpoint = try await harness.startCoordinator(["--scheduling", scheduling])
        let order = FinishLog()
        let bigBatch = SubmitBatch(
            requestID: "", items: (0..<2_000).map { BatchItem(source: "noop-\($0)") }, kind: .noop)
        let smallBatch = SubmitBatch(
            requestID: "", items: (0..<10).map { BatchItem(source: "noop-\($0)") }, kind: .noop)
        try await ClusterClient.withConnection(endpoint: endpoint, responseTimeout: .seconds(20)) { big in
            try await ClusterClient.withConnection(endpoint: endpoint, responseTimeout: .seconds(20)) { small in
                // The big batch is accepted first, then the small one; only then does a worker come, so both
                // wait for slots together and the order is the scheduler's alone.
                let bigDone = Self.follow(await big.submit(bigBatch), as: "big", into: order)
                try await order.waitUntilAccepted("big")
                let smallDone = Self.follow(await small.submit(smallBatch), as: "small", into: order)
                try await order.waitUntilAccepted("small")
                _ = try harness.startWorker("w1", endpoint: endpoint, slots: 2)
                try await bigDone.value
                try await smallDone.value
            }
        }
        return order.entries
    }

    /// Records the batch's events as they come, until it finished.
    private static func follow(
        _ events: AsyncThrowingStream<BatchEvent, any Error>, as name: String,
        into log: FinishLog
    ) -> Task<Void, any Error> {
        Task {
            for try await event in events {
                switch event {
                case .accepted, .attached, .retrying: log.accept(name)
                case .itemFinished: log.append(name, count: 1)
                case .itemsFinished(let items): log.append(name, count: items.count)
                case .finished: return
                case .itemsAdded: break
                }
            }
        }
    }

    func testASmallBatchBehindALargeOneFinishesLongBeforeItUnderFairShare() async throws {
        let order = try await finishOrder(scheduling: "fair")
        XCTAssertEqual(order.filter { $0 == "small" }.count, 10)
        XCTAssertEqual(order.filter { $0 == "big" }.count, 2_000)
        let lastSmall = order.lastIndex(of: "small") ?? .max
        XCTAssertLessThan(
            lastSmall, 200, "the 10 small items finish among the first 200 of 2,010 (big and small take turns)")
    }

    func testUnderFIFOTheSmallBatchWaitsForTheLargeOne() async throws {
        let order = try await finishOrder(scheduling: "fifo")
        let firstSmall = order.firstIndex(of: "small") ?? -1
        XCTAssertGreaterThan(firstSmall, 1_500, "FIFO: the small batch waits behind most of the big one")
    }
}

/// Which batch each finished item belonged to, in the order they arrived (appended from two tasks).
private final class FinishLog: @unchecked Sendable {
    private let lock = NSLock()
    private var log: [String] = []
    private var accepted: Set<String> = []

    func accept(_ name: String) {
        lock.lock()
        defer { lock.unlock() }
        accepted.insert(name)
    }

    /// Waits (polling) until the batch called `name` was accepted.
    func waitUntilAccepted(_ name: String) async throws {
        for _ in 0..<2_000 {
            let done = lock.withLock { accepted.contains(name) }
            if done { return }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw HarnessError("batch \(name) was not accepted")
    }

    func append(_ name: String, count: Int) {
        lock.lock()
        defer { lock.unlock() }
        log += Array(repeating: name, count: count)
    }

    var entries: [String] {
        lock.lock()
        defer { lock.unlock() }
        return log
    }
}
