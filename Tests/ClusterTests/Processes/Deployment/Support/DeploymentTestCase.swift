import Foundation
import Imaging
import ShiftworkTestSupport
import XCTest

/// Starts processes and an HTTP server for a test, and stops all of them when it ends.
class DeploymentTestCase: XCTestCase {
    private(set) var processes: [ManagedProcess] = []
    var server: TestHTTPServer?
    var scratch: URL!

    override func setUp() async throws {
        scratch = FileManager.default.temporaryDirectory.appendingPathComponent(
            "shiftwork-deployment-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
    }

    override func tearDown() async throws {
        // The origin first, then every process at once (ClusterTestCase and ClusterHarness.stopAll say why).
        server?.shutdown()
        server = nil
        await ManagedProcess.stop(processes)
        processes = []
        try? FileManager.default.removeItem(at: scratch)
    }

    /// Starts `executable` (the `shiftwork` binary unless given), with only the `SHIFTWORK_*` variables
    /// of `environment`; the test stops it at the latest in tearDown.
    func launch(
        _ name: String, _ arguments: [String], executable: URL = ShiftworkBinary.url,
        environment: [String: String] = [:]
    ) throws -> ManagedProcess {
        let process = try ManagedProcess(
            name, executable: executable, arguments: arguments,
            environment: blankingInheritedShiftworkVariables(except: environment),
            currentDirectory: Repository.root)
        processes.append(process)
        return process
    }

    /// Everything every process of this test printed so far, for failure messages.
    var allOutput: String {
        processes.map { "--- \($0.name)\($0.isRunning ? "" : " (exited)"):\n\($0.outputText)" }.joined(separator: "\n")
    }

    /// Starts a coordinator on a free loopback port (`tcp://127.0.0.1:*`) and returns its endpoint:
    /// with CurveZMQ when `keys` are given, else `--insecure`.
    func startCoordinator(keys: TestKeys? = nil) async throws -> String {
        let security =
            keys.map { ["--secret-key", $0.secretKey("coordinator"), "--allow-keys", $0.allowList.path] } ?? [
                "--insecure"
            ]
        let coordinator = try launch("coordinator", ["coordinator", "--listen", "tcp://127.0.0.1:*"] + security)
        let line = await coordinator.waitForLine { $0.contains("coordinator listening on ") }
        guard let endpoint = line?.components(separatedBy: "listening on ").last else {
            throw DeploymentTestError("the coordinator did not start:\n\(coordinator.outputText)")
        }
        return endpoint.trimmingCharacters(in: .whitespaces)
    }

    /// Serves synthetic images (alternately JPEG and PNG, each of a distinct size) and returns them.
    func serveImages(_ count: Int, prefix: String = "photo") throws -> [ServedImage] {
        let server = try self.server ?? TestHTTPServer()
        self.server = server
        return try (0..<count).map { index in
            let format: ImageFormat = index % 2 == 0 ? .jpeg : .png
            let (width, height) = (150 + 10 * index, 100 + 6 * index)
            let bytes = try SyntheticImages.make(
                width: width, height: height, format: format, seed: UInt64(100 + index))
            let path = "/images/\(prefix)-\(index).\(format.fileExtension)"
            server.serve(path: path, body: bytes, contentType: format.mediaType)
            return ServedImage(
                url: server.url(path), stem: "\(prefix)-\(index)", width: width, height: height, format: format)
        }
    }

    /// Checks that `directory` holds the tilt-shifted `image` (same name, format and size).
    func assertOutput(
        of image: ServedImage, in directory: URL, _ context: @autoclosure () -> String,
        file: StaticString = #filePath, line: UInt = #line
    ) {
        let output = directory.appendingPathComponent("\(image.stem).\(image.format.fileExtension)")
        guard let data = FileManager.default.contents(atPath: output.path) else {
            XCTFail("missing output \(output.path) for \(image.url):\n\(context())", file: file, line: line)
            return
        }
        do {
            let (decoded, format) = try ImageCodec.decode([UInt8](data))
            XCTAssertEqual(format, image.format, "format of \(output.lastPathComponent)", file: file, line: line)
            XCTAssertEqual(decoded.width, image.width, "width of \(output.lastPathComponent)", file: file, line: line)
            XCTAssertEqual(
                decoded.height, image.height, "height of \(output.lastPathComponent)", file: file, line: line)
        } catch {
            XCTFail("\(output.path) is not a readable image: \(error)\n\(context())", file: file, line: line)
        }
    }
}
