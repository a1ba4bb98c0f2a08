import Foundation
import Imaging
import ShiftworkTestSupport
import XCTest

/// `worker --compute-threads`: the images a worker filters at once, apart from its slots (by default twice
/// as many, so that downloads and sink writes overlap with the filtering); the sink's writes run on
/// threads of their own, never on a compute thread.
final class WorkerComputeThreadsTests: ClusterTestCase {
    func testSlotsDefaultToTwiceTheComputeThreadsAndSinkWritesRunOnTheirOwnThreads() async throws {
        let endpoint = try await harness.startCoordinator()
        let worker = try harness.launch(
            "worker",
            [
                "worker", "--compute-threads", "1", "--worker-id", "w",
                "--coordinator", endpoint,
            ])
        let urls = try server.serveSyntheticImages(6, prefix: "threads")
        let sink = harness.scratch.appendingPathComponent("shared")
        try FileManager.default.createDirectory(at: sink, withIntermediateDirectories: true)
        // The worker's threads exist from its start; read their CPU before the batch.
        let before = try await Self.threads(of: worker.pid, atLeast: ["compute", "sink io 1", "sink io 2"])

        let (status, output) = try await harness.run(
            ["submit"] + urls + ["--sink", sink.path, "--coordinator", endpoint])
        XCTAssertEqual(status, 0, "\(output)\n\(harness.allOutput)")
        let files = try FileManager.default.contentsOfDirectory(atPath: sink.path)
        XCTAssertEqual(files.count, 6, "\(files)")
        for file in files {
            let bytes = [UInt8](try Data(contentsOf: sink.appendingPathComponent(file)))
            XCTAssertEqual(try ImageCodec.decode(bytes).image.width, 120, file)
        }

        // Two slots (twice the one compute thread), as the coordinator saw them.
        let (statusCode, statusJSON) = try await harness.run(["status", "--json", "--coordinator", endpoint])
        XCTAssertEqual(statusCode, 0, statusJSON)
        let cluster = try XCTUnwrap(
            try JSONSerialization.jsonObject(with: Data(statusJSON.utf8)) as? [String: Any], statusJSON)
        XCTAssertEqual(cluster.objects("workers").first { $0["id"] as? String == "w" }?["slots"] as? Int, 2, statusJSON)

        // One compute thread filtered every image; the sink's writes (and their fsync) ran on its I/O threads.
        let after = try Self.threads(of: worker.pid)
        XCTAssertEqual(after.keys.filter { $0.hasPrefix("compute") }, ["compute"], "\(after.keys.sorted())")
        XCTAssertEqual(
            after.keys.filter { $0.hasPrefix("sink io") }.sorted(), ["sink io 1", "sink io 2"], "\(after.keys.sorted())"
        )
        let computeWork = (after["compute"] ?? 0) - (before["compute"] ?? 0)
        let sinkWork = ["sink io 1", "sink io 2"].reduce(UInt64(0)) { $0 + (after[$1] ?? 0) - (before[$1] ?? 0) }
        XCTAssertGreaterThan(computeWork, 0, "the compute thread did not run: \(after)")
        XCTAssertGreaterThan(sinkWork, 0, "no sink write ran on the sink's threads: \(before) → \(after)")
    }

    func testComputeThreadsBelowOneAreRefusedWithWhatTheyMean() async throws {
        let endpoint = try await harness.startCoordinator()
        let (status, output) = try await harness.run(
            ["worker", "--compute-threads", "0", "--coordinator", endpoint], timeout: .seconds(30))
        XCTAssertNotEqual(status, 0, output)
        XCTAssertTrue(output.contains("--compute-threads (or SHIFTWORK_COMPUTE_THREADS) must be at least 1"), output)
    }

    /// CPU time in nanoseconds of each thread of process `pid`, by thread name (`/proc/PID/task/TID/comm`
    /// and `schedstat`); waits up to 30 s for the threads named `atLeast` to exist.
    private static func threads(of pid: Int32, atLeast names: Set<String>) async throws -> [String: UInt64] {
        let deadline = ContinuousClock.now + .seconds(30)
        while true {
            let threads = try threads(of: pid)
            if names.isSubset(of: threads.keys) { return threads }
            guard ContinuousClock.now < deadline else {
                XCTFail("the worker's threads \(threads.keys.sorted()) lack some of \(names.sorted())")
                return threads
            }
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    private static func threads(of pid: Int32) throws -> [String: UInt64] {
        let tasks = URL(fileURLWithPath: "/proc/\(pid)/task")
        var result: [String: UInt64] = [:]
        for tid in try FileManager.default.contentsOfDirectory(atPath: tasks.path) {
            let directory = tasks.appendingPathComponent(tid)
            guard let name = try? String(contentsOf: directory.appendingPathComponent("comm"), encoding: .utf8),
                let schedstat = try? String(contentsOf: directory.appendingPathComponent("schedstat"), encoding: .utf8),
                let nanoseconds = schedstat.split(separator: " ").first.flatMap({ UInt64($0) })
            else { continue }
            result[name.trimmingCharacters(in: .whitespacesAndNewlines), default: 0] += nanoseconds
        }
        return result
    }
}
