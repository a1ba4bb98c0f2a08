import Foundation
import XCTest

/// Settings that would leave a process useless stop it at start, with status 1 and a message naming the option
/// and its variable (in a container, what was set is the variable): a worker without a coordinator address when
/// one is required (the image sets SHIFTWORK_REQUIRE_COORDINATOR), key files and allow-lists that are not there,
/// a sink directory (`--sink-dir`) that is not there or not a directory. The same cases run in the built image
/// in Tests/Containers/test_bad_settings.py.
final class StartupSettingsTests: ClusterTestCase {
    private func assertFails(
        _ arguments: [String], environment: [String: String] = [:], naming names: [String],
        file: StaticString = #filePath, line: UInt = #line
    ) async throws {
        let (status, output) = try await harness.run(arguments, timeout: .seconds(30), environment: environment)
        XCTAssertEqual(status, 1, "\(arguments) \(environment): \(output)", file: file, line: line)
        for name in names {
            XCTAssertTrue(output.contains(name), "the message does not name \(name): \(output)", file: file, line: line)
        }
    }

    func testAWorkerWithoutACoordinatorAddressWhenOneIsRequired() async throws {
        try await assertFails(
            ["worker"], environment: ["SHIFTWORK_REQUIRE_COORDINATOR": "1"],
            naming: ["SHIFTWORK_COORDINATOR", "--coordinator", "no coordinator address"])
    }

    func testKeyFilesAndAllowListsThatAreNotThere() async throws {
        let missing = harness.scratch.appendingPathComponent("not-mounted").path
        try await assertFails(
            ["worker", "--coordinator", "tcp://127.0.0.1:1"],
            environment: [
                "SHIFTWORK_SECRET_KEY": "\(missing)/worker.key",
                "SHIFTWORK_COORDINATOR_KEY": "\(missing)/coordinator.pub",
            ],
            naming: ["SHIFTWORK_SECRET_KEY", "\(missing)/worker.key"])
        let keys = harness.scratch.appendingPathComponent("keys")
        for name in ["worker", "coordinator"] {
            let (status, output) = try await harness.run(["keygen", name, "--out", keys.path])
            XCTAssertEqual(status, 0, output)
        }
        try await assertFails(
            ["worker", "--coordinator", "tcp://127.0.0.1:1"],
            environment: [
                "SHIFTWORK_SECRET_KEY": keys.appendingPathComponent("worker.key").path,
                "SHIFTWORK_COORDINATOR_KEY": "\(missing)/coordinator.pub",
            ],
            naming: ["SHIFTWORK_COORDINATOR_KEY", "\(missing)/coordinator.pub"])
        try await assertFails(
            ["coordinator", "--listen", "tcp://127.0.0.1:0"],
            environment: ["SHIFTWORK_SECRET_KEY": "\(missing)/coordinator.key", "SHIFTWORK_ALLOW_KEYS": missing],
            naming: ["SHIFTWORK_SECRET_KEY", "\(missing)/coordinator.key"])
        try await assertFails(
            ["coordinator", "--listen", "tcp://127.0.0.1:0"],
            environment: [
                "SHIFTWORK_SECRET_KEY": keys.appendingPathComponent("coordinator.key").path,
                "SHIFTWORK_ALLOW_KEYS": missing,
            ],
            naming: ["--allow-keys (SHIFTWORK_ALLOW_KEYS)", missing])
    }

    func testASinkDirectoryThatIsNotThereOrNotADirectory() async throws {
        let missing = harness.scratch.appendingPathComponent("outputs").path
        try await assertFails(
            ["worker", "--coordinator", "tcp://127.0.0.1:1"], environment: ["SHIFTWORK_SINK_DIR": missing],
            naming: ["--sink-dir (SHIFTWORK_SINK_DIR)", missing, "does not exist"])
        let file = harness.scratch.appendingPathComponent("a-file")
        try Data("x".utf8).write(to: file)
        try await assertFails(
            ["worker", "--coordinator", "tcp://127.0.0.1:1", "--sink-dir", file.path],
            naming: ["SHIFTWORK_SINK_DIR", file.path, "not a directory"])
    }

    func testAWritableSinkDirectoryAndAGivenCoordinatorStartTheWorker() async throws {
        // The control for the cases above: the same settings, correct, start a worker that stays up.
        let outputs = harness.scratch.appendingPathComponent("outputs")
        try FileManager.default.createDirectory(at: outputs, withIntermediateDirectories: true)
        let worker = try harness.launch(
            "worker", ["worker", "--coordinator", "tcp://127.0.0.1:1", "--health-listen", "127.0.0.1:0"],
            environment: ["SHIFTWORK_REQUIRE_COORDINATOR": "1", "SHIFTWORK_SINK_DIR": outputs.path])
        let line = await worker.waitForLine { $0.contains("health on http://") }
        XCTAssertNotNil(line, "the worker did not start:\n\(worker.outputText)")
        XCTAssertTrue(worker.isRunning, worker.outputText)
    }
}
