import Foundation
import Imaging
import ShiftworkTestSupport
import XCTest

/// End to end over real processes: a coordinator and two workers on loopback TCP, images served by a
/// real HTTP server on 127.0.0.1, a batch submitted through the `shiftwork` CLI.
final class ClusterProcessTests: XCTestCase {
    private var processes: [ManagedProcess] = []
    private var server: TestHTTPServer?
    private var scratch: URL!

    override func setUp() async throws {
        scratch = FileManager.default.temporaryDirectory.appendingPathComponent("shiftwork-cluster-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
    }

    override func tearDown() async throws {
        for process in processes.reversed() { await process.stop() }
        processes = []
        server?.shutdown()
        server = nil
        try? FileManager.default.removeItem(at: scratch)
    }

    private func launch(_ name: String, _ arguments: [String], environment: [String: String] = [:]) throws -> ManagedProcess {
        let process = try ManagedProcess(name, executable: ShiftworkBinary.url, arguments: arguments, environment: environment)
        processes.append(process)
        return process
    }

    /// Starts a coordinator on a free loopback port and returns its endpoint.
    private func startCoordinator() async throws -> String {
        let coordinator = try launch("coordinator", ["coordinator", "--listen", "tcp://127.0.0.1:*"])
        let line = await coordinator.waitForLine { $0.contains("coordinator listening on ") }
        let endpoint = try XCTUnwrap(line?.components(separatedBy: "listening on ").last,
                                     "the coordinator did not start:\n\(coordinator.outputText)")
        return endpoint.trimmingCharacters(in: .whitespaces)
    }

    func testBatchOfJPEGsAndPNGsThroughCoordinatorAndTwoWorkers() async throws {
        let server = try TestHTTPServer()
        self.server = server
        var expected: [(url: String, width: Int, height: Int, format: ImageFormat)] = []
        for index in 0..<6 {
            let format: ImageFormat = index % 2 == 0 ? .jpeg : .png
            let (width, height) = (160 + 16 * index, 120 + 8 * index)
            let bytes = try SyntheticImages.make(width: width, height: height, format: format, seed: UInt64(index))
            let path = "/images/photo-\(index).\(format.fileExtension)"
            server.serve(path: path, body: bytes, contentType: format.mediaType)
            expected.append((server.url(path), width, height, format))
        }

        let endpoint = try await startCoordinator()
        for index in 1...2 {
            _ = try launch("worker-\(index)", ["worker", "--slots", "2", "--worker-id", "test-worker-\(index)"],
                           environment: ["SHIFTWORK_COORDINATOR": endpoint])
        }
        let out = scratch.appendingPathComponent("out")
        let submit = try launch("submit", ["submit"] + expected.map(\.url) + ["--out", out.path, "--coordinator", endpoint])
        let status = await submit.waitForExit(timeout: .seconds(120))
        XCTAssertEqual(status, 0, "submit failed:\n\(submit.outputText)\n--- coordinator:\n\(processes[0].outputText)")

        for (index, item) in expected.enumerated() {
            let file = out.appendingPathComponent("photo-\(index).\(item.format.fileExtension)")
            let data = try XCTUnwrap(FileManager.default.contents(atPath: file.path), "missing \(file.path):\n\(submit.outputText)")
            let (image, format) = try ImageCodec.decode([UInt8](data))
            XCTAssertEqual(format, item.format, file.lastPathComponent)
            XCTAssertEqual(image.width, item.width, file.lastPathComponent)
            XCTAssertEqual(image.height, item.height, file.lastPathComponent)
        }
        XCTAssertTrue(submit.outputText.contains("6 items: 6 succeeded, 0 failed"), submit.outputText)
    }

    func testSubmitWithoutACoordinatorSaysWhereItTriedAndWhatToDo() async throws {
        let submit = try launch("submit", ["submit", "http://127.0.0.1:9/x.jpg", "--out", scratch.path,
                                           "--coordinator", "tcp://127.0.0.1:9", "--timeout", "1"])
        let status = await submit.waitForExit(timeout: .seconds(30))
        XCTAssertEqual(status, 1)
        XCTAssertTrue(submit.outputText.contains("no answer from a coordinator at tcp://127.0.0.1:9"), submit.outputText)
        XCTAssertTrue(submit.outputText.contains("shiftwork coordinator --listen"), submit.outputText)
    }
}
