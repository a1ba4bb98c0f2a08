import Foundation
import ShiftworkTestSupport

/// The Python virtual environment made by `scripts/setup-python` (pyzmq, protobuf, PyYAML and the
/// protobuf module generated from proto/). Set up at most once per test process; a failure to set it up
/// fails the test (it is never skipped), with the script's output.
actor PythonEnvironment {
    static let shared = PythonEnvironment()
    private var setup: Task<URL, any Error>?

    /// The venv's Python interpreter, after running `scripts/setup-python`.
    ///
    /// The script is idempotent and quick when nothing is missing; running it every time (rather than only
    /// when `.venv-test` is missing) also regenerates the protobuf module, so it never lags behind proto/.
    ///
    /// Under `make test`, which runs the script once before every test (scripts/test-all sets
    /// `SHIFTWORK_TEST_VENV_READY=1` when it passed), the venv is taken as it is: each test runs in a process of
    /// its own there, and the script's checks took 1 to 5 s in each of the two dozen tests that use Python.
    func python() async throws -> URL {
        if let setup { return try await setup.value }
        let interpreter = Repository.file(".venv-test/bin/python")
        if ProcessInfo.processInfo.environment["SHIFTWORK_TEST_VENV_READY"] == "1",
            FileManager.default.isExecutableFile(atPath: interpreter.path)
        {
            return interpreter
        }
        let task = Task<URL, any Error> {
            let script = Repository.file("scripts/setup-python")
            let process = try ManagedProcess(
                "setup-python", executable: URL(fileURLWithPath: "/bin/bash"), arguments: [script.path],
                currentDirectory: Repository.root)
            let status = await process.waitForExit(timeout: .seconds(900))
            if status == nil { await process.stop() }
            guard status == 0 else {
                throw DeploymentTestError(
                    "scripts/setup-python \(status.map { "exited with status \($0)" } ?? "did not finish in 15 minutes"):\n"
                        + process.outputText)
            }
            return Repository.file(".venv-test/bin/python")
        }
        setup = task
        return try await task.value
    }
}
