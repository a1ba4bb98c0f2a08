import Cluster
import Foundation
import ShiftworkTestSupport
import Wire
import XCTest

/// Starts `shiftwork` processes for a test (coordinator, workers, CLI commands) on loopback TCP and
/// stops every one of them in `stopAll()`.
final class ClusterHarness {
    private(set) var processes: [ManagedProcess] = []
    let scratch: URL

    init() throws {
        scratch = FileManager.default.temporaryDirectory.appendingPathComponent("shiftwork-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
    }

    func launch(_ name: String, _ arguments: [String], environment: [String: String] = [:]) throws -> ManagedProcess {
        try launch(name, executable: ShiftworkBinary.url, arguments, environment: environment)
    }

    /// Starts `executable` (e.g. `ip netns exec … shiftwork …`), stopped with the others in `stopAll()`.
    func launch(
        _ name: String, executable: URL, _ arguments: [String],
        environment: [String: String] = [:]
    ) throws -> ManagedProcess {
        let process = try ManagedProcess(name, executable: executable, arguments: arguments, environment: environment)
        processes.append(process)
        return process
    }

    /// Starts a coordinator on a free port of `host` (loopback by default; an IPv6 address is bracketed) and
    /// returns its endpoint: with CurveZMQ when `keys` are given (its own pair and the allow-list), else
    /// with `--insecure`.
    func startCoordinator(
        _ extraArguments: [String] = [], host: String = "127.0.0.1", keys: TestKeys? = nil
    ) async throws -> String {
        let security =
            keys.map { ["--secret-key", $0.secretKey("coordinator"), "--allow-keys", $0.allowList.path] } ?? [
                "--insecure"
            ]
        let listen = "tcp://\(host.contains(":") ? "[\(host)]" : host):*"
        let coordinator = try launch("coordinator", ["coordinator", "--listen", listen] + security + extraArguments)
        let line = await coordinator.waitForLine { $0.contains("coordinator listening on ") }
        guard let endpoint = line?.components(separatedBy: "listening on ").last else {
            throw HarnessError("the coordinator did not start:\n\(coordinator.outputText)")
        }
        return endpoint.trimmingCharacters(in: .whitespaces)
    }

    /// Starts a worker of `endpoint`; with `keys`, it uses the pair named `keyName` (default: `id`).
    @discardableResult
    func startWorker(
        _ id: String, endpoint: String, slots: Int = 2, keys: TestKeys? = nil, keyName: String? = nil
    ) throws -> ManagedProcess {
        try launch(
            id,
            ["worker", "--slots", String(slots), "--worker-id", id, "--coordinator", endpoint]
                + (keys?.peerArguments(keyName ?? id) ?? []))
    }

    /// Runs a CLI command to completion; returns its exit status and output.
    func run(
        _ arguments: [String], timeout: Duration = .seconds(60),
        environment: [String: String] = [:]
    ) async throws -> (status: Int32?, output: String) {
        let process = try launch(arguments.first ?? "cli", arguments, environment: environment)
        let status = await process.waitForExit(timeout: timeout)
        return (status, process.outputText)
    }

    /// `shiftwork status [BATCH] --json`, parsed; `keyArguments` are a client's CurveZMQ options.
    func status(_ endpoint: String, batch: String? = nil, keyArguments: [String] = []) async throws -> [String: Any] {
        let (status, output) = try await run(
            ["status"] + (batch.map { [$0] } ?? []) + ["--json", "--coordinator", endpoint]
                + keyArguments)
        guard status == 0, let object = try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any]
        else {
            throw HarnessError("status failed (\(String(describing: status))):\n\(output)")
        }
        return object
    }

    /// Polls the cluster status until `condition` holds, and returns that status. Throws (the test fails, with
    /// the last status and every process's output) when `timeout` passes first: a state that never came is
    /// never mistaken for one that did.
    @discardableResult
    func waitForStatus(
        _ endpoint: String, batch: String? = nil, keyArguments: [String] = [], timeout: Duration = .seconds(30),
        until condition: ([String: Any]) -> Bool,
        file: StaticString = #filePath, line: UInt = #line
    ) async throws -> [String: Any] {
        let deadline = ContinuousClock.now + timeout
        var last: [String: Any] = [:]
        while ContinuousClock.now < deadline {
            last = try await status(endpoint, batch: batch, keyArguments: keyArguments)
            if condition(last) { return last }
            try await Task.sleep(for: .milliseconds(50))
        }
        let text =
            (try? JSONSerialization.data(withJSONObject: last, options: [.sortedKeys]))
            .map { String(decoding: $0, as: UTF8.self) } ?? "\(last)"
        throw HarnessError(
            "\(file):\(line): the status the test waited for did not come in \(timeout); the last was \(text)\n\(allOutput)"
        )
    }

    /// Runs `body` with a client of the coordinator at `endpoint` in this process (not a CLI process),
    /// closed when `body` ends.
    func withClient<Value>(_ endpoint: String, _ body: (ClusterClient) async throws -> Value) async throws -> Value {
        try await ClusterClient.withConnection(endpoint: endpoint, responseTimeout: .seconds(30), body)
    }

    /// Polls the coordinator's status in this process, through `client`, until `condition` holds, and returns
    /// that reply; throws when `timeout` passes first. A request on an open socket takes milliseconds where a
    /// `shiftwork status` process takes hundreds of them on a loaded machine: for timing what the coordinator and workers do
    /// (docs/benchmarks.md, "`make test`: debug build flags, the cancel-timing tests").
    @discardableResult
    func waitForStatus(
        _ client: ClusterClient, timeout: Duration = .seconds(30),
        until condition: (StatusReply) -> Bool,
        file: StaticString = #filePath, line: UInt = #line
    ) async throws -> StatusReply {
        let deadline = ContinuousClock.now + timeout
        var last = try await client.status()
        while !condition(last) {
            guard ContinuousClock.now < deadline else {
                throw HarnessError(
                    "\(file):\(line): the status the test waited for did not come in \(timeout); the last was \(last)\n\(allOutput)"
                )
            }
            try await Task.sleep(for: .milliseconds(10))
            last = try await client.status()
        }
        return last
    }

    /// Everything the processes printed, for failure messages.
    var allOutput: String {
        processes.map { "--- \($0.name):\n\($0.outputText)" }.joined(separator: "\n")
    }

    /// Stops every process the test started, all at once (``ManagedProcess/stop(_:grace:)``), and removes
    /// the scratch directory.
    func stopAll() async {
        await ManagedProcess.stop(processes)
        processes = []
        try? FileManager.default.removeItem(at: scratch)
    }
}

struct HarnessError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

extension Dictionary where Key == String, Value == Any {
    func int(_ key: String) -> Int { (self[key] as? NSNumber)?.intValue ?? -1 }
    func objects(_ key: String) -> [[String: Any]] { self[key] as? [[String: Any]] ?? [] }
}
