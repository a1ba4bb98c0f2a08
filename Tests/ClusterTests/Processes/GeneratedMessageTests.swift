import Foundation
import Messaging
import ShiftworkTestSupport
import Wire
import XCTest

/// Every message type with extreme values in its fields (`ExtremeMessages`, seeded), sent to real processes:
/// a coordinator (as a client and as a registered worker) and a worker (from a test coordinator, a ROUTER the
/// test owns). After each message type the process is alive and answers (a status request; a heartbeat), and
/// its counters say what happened: each field out of bounds is refused and counted by field
/// (`shiftwork_messages_refused_total`), messages of the wrong direction are dropped and counted, and a worker
/// answers every assignment it received, however odd its fields. docs/benchmarks.md ("Hostile peers") has
/// the counts.
final class GeneratedMessageTests: ClusterTestCase {
    static let seed: UInt64 = 0x5EED_0028

    func testACoordinatorBoundsEveryFieldOfEveryMessageAndKeepsServing() async throws {
        let coordinator = try harness.launch(
            "coordinator",
            [
                "coordinator", "--listen", "tcp://127.0.0.1:*", "--insecure", "--metrics-listen", "127.0.0.1:0",
                "--max-batch-items", "1000", "--worker-timeout", "120",  // the fake worker heartbeats only as a probe
            ])
        let endpointLine = await coordinator.waitForLine { $0.contains("listening on") }
        let metricsLine = await coordinator.waitForLine { $0.hasPrefix("metrics on ") }
        let endpoint = try XCTUnwrap(
            endpointLine?.components(separatedBy: "listening on ").last, coordinator.outputText)
        let metricsURL = try XCTUnwrap(metricsLine?.components(separatedBy: "metrics on ").last, coordinator.outputText)
        let context = try MessagingContext()
        let client = try await WirePeer(kind: .dealer, identity: "gen-client", connect: endpoint, context: context)
        let worker = try await WirePeer(kind: .dealer, identity: "gen-worker", connect: endpoint, context: context)
        worker.send(.workerHello(WorkerHello(workerID: "gen-worker", slots: 2, acceptsBatches: true)))
        let welcomed = await worker.next { if case .welcome = $0 { true } else { nil } }
        XCTAssertNotNil(welcomed, coordinator.outputText)
        // A batch whose task the fake worker holds, for a result that answers it out of bounds.
        client.send(
            .submitBatch(
                SubmitBatch(requestID: "known", items: [BatchItem(source: "http://127.0.0.1:9/a.jpg")], kind: .noop)))
        let accepted = await client.next {
            if case .batchAccepted(let a) = $0, a.requestID == "known" { a } else { nil }
        }
        let batchID = try XCTUnwrap(accepted?.batchID, coordinator.outputText)
        let running = await worker.next { if case .taskAssignment(let a) = $0 { a } else { nil } }
        XCTAssertNotNil(running, coordinator.outputText)

        var generator = ExtremeMessages(seed: Self.seed)
        let workerGroups = generator.workerProbes(workerID: "gen-worker", runningTask: running)
        let clientGroups = generator.clientProbes(batchID: batchID, maxBatchItems: 1000)
        var refusedByField: [String: UInt64] = [:]
        var dropped = 0
        var sent: [String: Int] = [:]
        var statusRound = 0
        for (peer, groups) in [(worker, workerGroups), (client, clientGroups)] {
            for (type, probes) in groups {
                for probe in probes {
                    peer.send(probe.message)
                    switch probe.expectation {
                    case .refused(let field): refusedByField[field, default: 0] += 1
                    case .dropped: dropped += 1
                    case .handled: break
                    }
                }
                sent[type, default: 0] += probes.count
                // Alive, and answering a real request, after each message type.
                statusRound += 1
                let requestID = "alive-\(statusRound)"
                client.send(.statusRequest(StatusRequest(requestID: requestID)))
                let reply = await client.next {
                    if case .statusReply(let r) = $0, r.requestID == requestID { r } else { nil }
                }
                XCTAssertNotNil(reply, "no status after the \(type) probes:\n\(coordinator.outputText.suffix(4000))")
                XCTAssertTrue(
                    coordinator.isRunning,
                    "the coordinator died after the \(type) probes:\n\(coordinator.outputText.suffix(4000))")
            }
        }
        XCTAssertEqual(Set(sent.keys).count, 32, "every case of Message was tried: \(sent.keys.sorted())")

        // The counters say what happened: each refused field counted once per probe, the drops in status.
        let page = try await TestHTTPClient.get(metricsURL).text
        var counted: [String: UInt64] = [:]
        for line in page.split(separator: "\n") where line.hasPrefix("shiftwork_messages_refused_total{") {
            guard let open = line.range(of: "field=\""), let close = line[open.upperBound...].firstIndex(of: "\""),
                let value = line.split(separator: " ").last.flatMap({ Double($0) })
            else { continue }
            counted[String(line[open.upperBound..<close])] = UInt64(value)
        }
        XCTAssertEqual(counted, refusedByField, page)
        let status = try await harness.status(endpoint)
        XCTAssertGreaterThanOrEqual(status.int("dropped_messages"), dropped, "\(status)")
        // Requests refused for a field are answered with a refusal that names it; so are the worker's hellos.
        let clientRefusals = client.received.compactMap {
            if case .refusal(let r) = $0, r.reason.hasPrefix("refused: ") { r } else { nil }
        }
        let clientRefused = clientGroups.flatMap(\.probes).filter {
            if case .refused = $0.expectation { true } else { false }
        }.count
        XCTAssertEqual(clientRefusals.count, clientRefused, clientRefusals.map(\.reason).joined(separator: "\n"))
        XCTAssertTrue(clientRefusals.allSatisfy { [.limit, .invalidRequest].contains($0.code) })
        for refusal in clientRefusals {
            // "refused: FIELD is N bytes long, more than the limit of M", "… is nan, outside 0...1", …
            XCTAssertTrue(
                ["more than the limit of", "outside 0...1", "neither 0 nor within"].contains {
                    refusal.reason.contains($0)
                },
                refusal.reason)
        }
        // The result that answered the held task out of bounds failed its item, with why.
        let item = try await harness.waitForStatus(endpoint, batch: batchID) { status in
            status.objects("batches").first?.objects("item_states").first?["state"] as? String == "failed"
        }.objects("batches").first?.objects("item_states").first
        XCTAssertTrue(
            (item?["error"] as? String)?.contains("TaskResult.output.warnings has 65 entries") == true,
            "\(String(describing: item))")
        XCTAssertTrue(coordinator.isRunning, coordinator.outputText)
        print(
            "generated-message test, coordinator: \(sent.values.reduce(0, +)) messages of \(sent.count) types "
                + "(\(sent.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))); refused by field: "
                + "\(refusedByField.values.reduce(0, +)) (\(refusedByField.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))); "
                + "dropped: \(status.int("dropped_messages"))")
        await client.close()
        await worker.close()
        await context.terminate()
    }

    func testAWorkerAnswersEveryAssignmentWhateverItsFields() async throws {
        let context = try MessagingContext()
        let router = try await WirePeer(kind: .router, identity: nil, bind: "tcp://127.0.0.1:*", context: context)
        let endpoint = try XCTUnwrap(router.channel.boundEndpoint)
        let worker = try harness.launch(
            "worker", ["worker", "--worker-id", "gen", "--slots", "4", "--coordinator", endpoint])
        let hello = await router.next { if case .workerHello(let h) = $0 { h } else { nil } }
        XCTAssertNotNil(hello, worker.outputText)
        let identity = try XCTUnwrap(router.lastIdentity)
        func send(_ message: Message) { router.send(message, to: identity) }
        /// The last heartbeat received after now (the worker is alive and its loop turns): what it says it dropped.
        func heartbeat(after what: String) async -> UInt64? {
            let since = router.received.count
            let deadline = ContinuousClock.now + .seconds(20)
            while ContinuousClock.now < deadline {
                let messages = router.received
                if since < messages.count,
                    let beat = messages[since...].lazy
                        .compactMap({ message -> UInt64? in
                            if case .heartbeat(let h) = message { h.droppedMessages } else { nil }
                        }).last
                {
                    XCTAssertTrue(worker.isRunning, "the worker died after \(what):\n\(worker.outputText.suffix(4000))")
                    return beat
                }
                try? await Task.sleep(for: .milliseconds(20))
            }
            XCTFail("no heartbeat after \(what):\n\(worker.outputText.suffix(4000))")
            return nil
        }

        // Welcomes at the extremes (each registers it again), then one at 100 ms for the rest. (Not an interval
        // of 2³²−1 ms: clamped to 60 s, a heartbeat loop that took it between two welcomes would sleep that long.)
        for welcome in [
            Welcome(heartbeatIntervalMs: 0),
            Welcome(
                heartbeatIntervalMs: 0, coordinatorID: ExtremeMessages.mebibyte,
                acceptsBatches: true, maxMessageBytes: .max),
            Welcome(heartbeatIntervalMs: 1, maxMessageBytes: 1),
        ] {
            send(.welcome(welcome))
        }
        send(.welcome(Welcome(heartbeatIntervalMs: 100, coordinatorID: "gen", acceptsBatches: true)))
        _ = await heartbeat(after: "the welcomes")

        var generator = ExtremeMessages(seed: Self.seed)
        var expectedKeys = Set<UInt64>()
        var sent: [String: Int] = [:]
        for (type, assignments) in generator.assignments(firstKey: 1) {
            if type == "TaskAssignmentBatch" {
                send(.taskAssignments(assignments))
            } else {
                for assignment in assignments { send(.taskAssignment(assignment)) }
            }
            expectedKeys.formUnion(assignments.map(\.taskKey))
            sent[type] = assignments.count
            _ = await heartbeat(after: "the \(type) probes")
        }
        // An enum value this version does not know, on the wire as it is (the Swift types cannot say it).
        let unknownKind: UInt64 = 900_000
        router.channel.send([identity, RawEnvelope.taskAssignment(taskID: "gen-kind-7", kind: 7, taskKey: unknownKind)])
        expectedKeys.insert(unknownKind)
        sent["TaskAssignment (unknown kind)"] = 1
        let unknownFormat: UInt64 = 900_001
        router.channel.send([
            identity,
            RawEnvelope.taskAssignment(taskID: "gen-format-7", kind: 2, taskKey: unknownFormat, outputFormat: 7),
        ])
        expectedKeys.insert(unknownFormat)
        sent["TaskAssignment (unknown image format)"] = 1

        // Every assignment is answered: a result per task key.
        var answered = Set<UInt64>()
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            answered = Set(router.received.compactMap { if case .taskResult(let r) = $0 { r.taskKey } else { nil } })
            if expectedKeys.isSubset(of: answered) { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        let missing = expectedKeys.subtracting(answered).sorted()
        XCTAssertEqual(missing, [], "assignments without an answer:\n\(worker.outputText.suffix(4000))")
        let results = router.received.compactMap { if case .taskResult(let r) = $0 { r } else { nil } }
        let refusedAnswers = results.filter {
            if case .failure(let f) = $0.outcome { f.message.hasPrefix("the assignment was refused: ") } else { false }
        }
        XCTAssertTrue(refusedAnswers.contains { $0.taskKey == unknownKind }, "the unknown kind is answered as refused")
        XCTAssertTrue(
            refusedAnswers.contains { $0.taskKey == unknownFormat }, "the unknown image format is answered as refused")

        // The rest of what a coordinator sends, then what it never sends a worker: dropped and counted.
        let dropsBefore = await heartbeat(after: "the assignments") ?? 0
        send(.cancelTask(CancelTask(taskID: ExtremeMessages.mebibyte, reason: ExtremeMessages.mebibyte, taskKey: .max)))
        send(.cancelTask(CancelTask(taskID: "", reason: "", taskKey: 0)))
        send(.giveBackTask(GiveBackTask(taskKey: .max, attempt: .max)))
        send(.giveBackTask(GiveBackTask(taskKey: 0, attempt: 0)))
        let clientOnly: [Message] = [
            .batchAccepted(BatchAccepted(requestID: "", batchID: "b", itemCount: .max)),
            .itemsAdded(ItemsAdded(batchID: "b", parentIndex: .max, firstIndex: .max, items: [])),
            .statusReply(StatusReply(requestID: "", batches: [BatchStatus(batchID: "b", itemCount: .max)])),
            .submitBatch(
                SubmitBatch(
                    requestID: "",
                    items: Array(repeating: BatchItem(source: "s"), count: ExtremeMessages.hundredThousand))),
            .heartbeat(
                Heartbeat(
                    workerID: ExtremeMessages.mebibyte,
                    holding: Array(repeating: .max, count: ExtremeMessages.hundredThousand))),
        ]
        for message in clientOnly { send(message) }
        sent["CancelTask"] = 2
        sent["GiveBackTask"] = 2
        sent["dropped (for clients or coordinators)"] = clientOnly.count
        var drops = dropsBefore
        let dropDeadline = ContinuousClock.now + .seconds(20)
        while drops < dropsBefore + UInt64(clientOnly.count), ContinuousClock.now < dropDeadline {
            drops = await heartbeat(after: "the messages for others") ?? drops
        }
        XCTAssertEqual(
            drops, dropsBefore + UInt64(clientOnly.count), "the worker counts what it dropped in its heartbeats")
        // A refusal that does not know it (with a 1 MiB reason) makes it register again; anything else is taken as final.
        send(.refusal(Refusal(code: .unknownWorker, reason: ExtremeMessages.mebibyte)))
        let again = await router.next { if case .workerHello(let h) = $0 { h } else { nil } }
        XCTAssertNotNil(again, String(worker.outputText.suffix(4000)))
        XCTAssertTrue(worker.isRunning, String(worker.outputText.suffix(4000)))
        print(
            "generated-message test, worker: \(sent.values.reduce(0, +)) messages "
                + "(\(sent.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))); "
                + "\(expectedKeys.count) assignments, all answered (\(refusedAnswers.count) refused for a field); dropped: \(drops)"
        )
        await router.close()
        await context.terminate()
    }
}

/// Protobuf bytes written by hand, for values the Swift types cannot hold (an enum value this version does
/// not know).
enum RawEnvelope {
    static func varint(_ value: UInt64) -> [UInt8] {
        var value = value
        var bytes: [UInt8] = []
        repeat {
            var byte = UInt8(value & 0x7F)
            value >>= 7
            if value != 0 { byte |= 0x80 }
            bytes.append(byte)
        } while value != 0
        return bytes
    }

    static func field(_ number: UInt64, varint value: UInt64) -> [UInt8] { varint(number << 3) + varint(value) }

    static func field(_ number: UInt64, bytes: [UInt8]) -> [UInt8] {
        varint(number << 3 | 2) + varint(UInt64(bytes.count)) + bytes
    }

    /// An envelope of this version holding a `TaskAssignment` of kind `kind`.
    static func taskAssignment(taskID: String, kind: UInt64, taskKey: UInt64, outputFormat: UInt64? = nil) -> [UInt8] {
        var assignment =
            field(1, bytes: Array(taskID.utf8)) + field(2, bytes: Array("b-gen".utf8)) + field(3, varint: 1)
            + field(4, varint: kind) + field(8, varint: taskKey) + field(9, varint: taskKey)
        if let outputFormat { assignment += field(7, bytes: field(5, varint: outputFormat)) }
        return field(1, varint: UInt64(WireProtocol.major)) + field(2, varint: UInt64(WireProtocol.minor))
            + field(21, bytes: assignment)
    }
}
