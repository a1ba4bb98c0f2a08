import Foundation
import Messaging
import ShiftworkTestSupport
import Wire
import XCTest

/// A worker's messages speak only for the worker that sent them (`WorkerBinding`), over real sockets on
/// loopback TCP against a real coordinator process: an honest worker and a lying one, each with its own
/// CurveZMQ key (both on the allow-list, so both have the worker role), played on real ZeroMQ sockets
/// (`WirePeer`) so that the liar can send what a `shiftwork worker` never would. A real `shiftwork submit` waits for
/// the item, whose outcome must be the honest worker's.
final class WorkerBindingTests: ClusterTestCase {

    /// Starts a coordinator (with `keys`: CurveZMQ, else `--insecure`) and its metrics; returns the
    /// endpoint and the metrics URL. Workers are given a minute of silence before they are declared dead.
    private func startCoordinator(keys: TestKeys?) async throws -> (endpoint: String, metrics: String) {
        let endpoint = try await harness.startCoordinator(
            ["--metrics-listen", "127.0.0.1:0", "--worker-timeout", "60"], keys: keys)
        let line = await harness.processes[0].waitForLine { $0.hasPrefix("metrics on ") }
        let metrics = try XCTUnwrap(line?.components(separatedBy: "metrics on ").last, harness.allOutput)
        return (endpoint, metrics.trimmingCharacters(in: .whitespaces))
    }

    /// Submits one item with `client`'s key (none without `keys`) in the background; the source is never
    /// fetched: the fake workers answer for it.
    private func submit(endpoint: String, keys: TestKeys?) throws -> ManagedProcess {
        try harness.launch(
            "submit",
            [
                "submit", "http://127.0.0.1:9/photo.png", "--retries", "0",
                "--out", harness.scratch.appendingPathComponent("out").path,
                "--coordinator", endpoint,
            ] + (keys?.peerArguments("client") ?? []))
    }

    /// `shiftwork_refusals_total` by reason, summed over the other labels.
    private func refusals(_ metricsURL: String) async throws -> [String: Double] {
        let page = try await TestHTTPClient.get(metricsURL).text
        var byReason: [String: Double] = [:]
        for (series, value) in MetricsTests.samples(page) where series.hasPrefix("shiftwork_refusals_total{") {
            guard let range = series.range(of: #"reason="[a-z_]+""#, options: .regularExpression) else { continue }
            byReason[String(series[range].dropFirst("reason=\"".count).dropLast()), default: 0] += value
        }
        return byReason
    }

    /// A coordinator (with `keys`: CurveZMQ), an honest worker "honest-w" (key "honest") with one slot, and a
    /// submission whose download task the honest worker holds.
    private struct Scene {
        let endpoint: String
        let metricsURL: String
        let context: MessagingContext
        let honest: WirePeer
        let submit: ManagedProcess
        let task: TaskAssignment
    }

    private func honestWorkerWithATask(keys: TestKeys?) async throws -> Scene {
        let (endpoint, metricsURL) = try await startCoordinator(keys: keys)
        let context = try MessagingContext()
        let honest = try await WirePeer.worker(
            "honest-w", key: keys.map { _ in "honest" }, keys: keys, endpoint: endpoint,
            context: context)
        honest.send(.workerHello(WorkerHello(workerID: "honest-w", slots: 1)))
        let welcome = await honest.next { if case .welcome(let w) = $0 { w } else { nil } }
        XCTAssertNotNil(welcome, harness.allOutput)
        let submit = try submit(endpoint: endpoint, keys: keys)
        let assigned = await honest.next { if case .taskAssignment(let a) = $0 { a } else { nil } }
        let task = try XCTUnwrap(assigned, harness.allOutput)
        return Scene(
            endpoint: endpoint, metricsURL: metricsURL, context: context, honest: honest, submit: submit, task: task)
    }

    /// The submission ends with its item failed with the honest worker's answer, and no forged one.
    private func assertTheItemFailedWithTheHonestAnswer(
        _ submit: ManagedProcess, file: StaticString = #filePath,
        line: UInt = #line
    ) async {
        let status = await submit.waitForExit(timeout: .seconds(60))
        XCTAssertEqual(status, 1, submit.outputText, file: file, line: line)
        XCTAssertTrue(submit.outputText.contains("the honest answer"), submit.outputText, file: file, line: line)
        XCTAssertFalse(submit.outputText.contains("forged"), submit.outputText, file: file, line: line)
    }

    private static func failure(_ message: String) -> TaskOutcome {
        .failure(TaskFailure(code: .download, message: message, isTransient: false))
    }

    func testAWorkerKeyCannotSpeakForAnotherWorkersTasksIDOrConnection() async throws {
        let keys = try await TestKeys(in: harness.scratch, allowed: ["honest", "liar", "client"])
        let scene = try await honestWorkerWithATask(keys: keys)
        let (endpoint, metricsURL, context, task) = (scene.endpoint, scene.metricsURL, scene.context, scene.task)
        var honest = scene.honest

        // 1. From a connection of its own: a result for the honest worker's task, and a hello under its ID.
        let liar = try await WirePeer.worker("liar-w", key: "liar", keys: keys, endpoint: endpoint, context: context)
        liar.send(
            .taskResult(
                TaskResult(
                    taskID: task.taskID, attempt: task.attempt, outcome: Self.failure("forged by another connection"),
                    taskKey: task.taskKey)))
        liar.send(.workerHello(WorkerHello(workerID: "honest-w", slots: 8)))
        let idTaken = await liar.next { if case .refusal(let r) = $0 { r } else { nil } }
        XCTAssertEqual(idTaken?.code, .forbidden, harness.allOutput)
        XCTAssertTrue(
            idTaken?.reason.contains("worker ID honest-w is registered by another connection") == true,
            "\(String(describing: idTaken))")
        await liar.close()

        // 2. On the honest worker's routing identity, with the liar's key: the coordinator cannot tell this
        //    connection from the worker's but by its key. (The honest worker is away meanwhile; were it
        //    connected, ROUTER handover would give the identity to the newer connection all the same.)
        await honest.close()
        let usurper = try await WirePeer.worker(
            "honest-w", key: "liar", keys: keys, endpoint: endpoint, context: context)
        usurper.send(
            .taskResult(
                TaskResult(
                    taskID: task.taskID, attempt: task.attempt, outcome: Self.failure("forged through a takeover"),
                    taskKey: task.taskKey)))
        usurper.send(
            .taskResults([
                TaskResult(
                    taskID: task.taskID, attempt: task.attempt, outcome: Self.failure("forged in a batch"),
                    taskKey: task.taskKey)
            ]))
        usurper.send(.heartbeat(Heartbeat(workerID: "honest-w")))
        usurper.send(.workerGoodbye(WorkerGoodbye(workerID: "honest-w")))
        usurper.send(.workerHello(WorkerHello(workerID: "honest-w", slots: 8)))
        let keyMismatch = await usurper.next { if case .refusal(let r) = $0 { r } else { nil } }
        XCTAssertEqual(keyMismatch?.code, .forbidden, harness.allOutput)
        XCTAssertTrue(
            keyMismatch?.reason.contains("worker ID honest-w is registered with another key") == true,
            "\(String(describing: keyMismatch))")
        await usurper.close()

        // The honest worker comes back on a new connection with its own key: still registered, its task still
        // its own, and its answer is the item's outcome.
        honest = try await WirePeer.worker("honest-w", key: "honest", keys: keys, endpoint: endpoint, context: context)
        honest.send(.heartbeat(Heartbeat(workerID: "honest-w")))
        honest.send(
            .taskResult(
                TaskResult(
                    taskID: task.taskID, attempt: task.attempt, outcome: Self.failure("the honest answer"),
                    taskKey: task.taskKey)))
        await assertTheItemFailedWithTheHonestAnswer(scene.submit)
        XCTAssertFalse(
            honest.received.contains { if case .refusal = $0 { true } else { false } },
            "the honest worker was never refused: \(honest.received)")

        // Every refusal counted by its reason, and logged with the key, escaped.
        let counted = try await refusals(metricsURL)
        XCTAssertEqual(counted["not_assigned"], 1, "\(counted)")
        XCTAssertEqual(counted["worker_id_taken"], 1, "\(counted)")
        XCTAssertEqual(counted["worker_key_mismatch"], 5, "result, batch, heartbeat, goodbye, hello: \(counted)")
        let log = harness.processes[0].outputText
        XCTAssertTrue(log.contains("refused a worker message: it does not speak for its sender"), log)
        XCTAssertTrue(log.contains(try keys.z85("liar")), log)
        await honest.close()
        await context.terminate()
    }

    func testWithoutKeysAWorkerIDAndItsTasksBelongToTheConnectionThatRegisteredThem() async throws {
        let scene = try await honestWorkerWithATask(keys: nil)
        let (endpoint, metricsURL, context, task, honest) = (
            scene.endpoint, scene.metricsURL, scene.context, scene.task, scene.honest
        )

        let other = try await WirePeer.worker("other-w", key: nil, keys: nil, endpoint: endpoint, context: context)
        other.send(
            .taskResult(
                TaskResult(
                    taskID: task.taskID, attempt: task.attempt, outcome: Self.failure("forged by another connection"),
                    taskKey: task.taskKey)))
        other.send(.workerHello(WorkerHello(workerID: "honest-w", slots: 8)))
        let refusal = await other.next { if case .refusal(let r) = $0 { r } else { nil } }
        XCTAssertTrue(
            refusal?.reason.contains("worker ID honest-w is registered by another connection") == true,
            "\(String(describing: refusal))")

        honest.send(
            .taskResult(
                TaskResult(
                    taskID: task.taskID, attempt: task.attempt, outcome: Self.failure("the honest answer"),
                    taskKey: task.taskKey)))
        await assertTheItemFailedWithTheHonestAnswer(scene.submit)
        let counted = try await refusals(metricsURL)
        XCTAssertEqual(counted["not_assigned"], 1, "\(counted)")
        XCTAssertEqual(counted["worker_id_taken"], 1, "\(counted)")
        await other.close()
        await honest.close()
        await context.terminate()
    }
}

extension WirePeer {
    /// A worker's DEALER with the routing identity `identity` and, with `keys`, the CurveZMQ pair `key`.
    static func worker(
        _ identity: String, key: String?, keys: TestKeys?, endpoint: String,
        context: MessagingContext
    ) async throws -> WirePeer {
        var options = SocketOptions()
        if let key, let keys {
            options.curve = .client(
                try CurveKeyPair.load(secretKeyFile: keys.secretKey(key)),
                serverKey: try CurvePublicKey.load(file: keys.publicKey("coordinator")))
        }
        return try await WirePeer(
            kind: .dealer, identity: identity, connect: endpoint, options: options, context: context)
    }
}
