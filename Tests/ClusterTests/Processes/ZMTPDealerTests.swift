import ClusterSimulation
import Foundation
import Wire
import XCTest

/// The simulated workers speak ZeroMQ's protocol on their TCP connections themselves (`ZMTPFraming`,
/// `ZMTPReader`, `ClusterBenchmark`'s `ZMTPConnection`): a real `shiftwork coordinator` must take such a
/// worker exactly as it takes a libzmq DEALER. Non-blocking socket calls, polled with short sleeps, so
/// that nothing blocks a thread of Swift's cooperative pool.
final class ZMTPDealerTests: ClusterTestCase {
    /// A TCP connection to the coordinator, closed by the test.
    private struct Connection {
        let descriptor: Int32

        /// Writes `bytes` whole, waiting while the connection is not up yet or has no room (up to 30 s).
        func write(_ bytes: [UInt8]) async throws {
            var sent = 0
            let deadline = ContinuousClock.now + .seconds(30)
            while sent < bytes.count {
                let count = bytes.withUnsafeBytes {
                    send(
                        descriptor, $0.baseAddress.map { $0 + sent }, bytes.count - sent,
                        Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
                }
                if count > 0 {
                    sent += count
                } else if errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOTCONN, ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(10))
                } else {
                    throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
                }
            }
        }

        /// Reads until `reader` has handed on an event `match` picks (or fails after 30 s).
        func next<T>(_ reader: inout ZMTPReader, _ match: (ZMTPReader.Event) -> T?) async throws -> T? {
            var buffer = [UInt8](repeating: 0, count: 1 << 16)
            let deadline = ContinuousClock.now + .seconds(30)
            while ContinuousClock.now < deadline {
                let count = buffer.withUnsafeMutableBytes {
                    recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT))
                }
                if count == 0 { return nil }  // closed by the coordinator
                if count < 0 {
                    guard errno == EAGAIN || errno == EWOULDBLOCK else {
                        throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
                    }
                    try await Task.sleep(for: .milliseconds(10))
                    continue
                }
                var found: T?
                try buffer.withUnsafeBytes { bytes in
                    try reader.read(UnsafeRawBufferPointer(rebasing: bytes[0..<count])) { event in
                        if found == nil { found = match(event) }
                    }
                }
                if let found { return found }
            }
            return nil
        }
    }

    private func connect(to endpoint: String) async throws -> Connection {
        let port = try XCTUnwrap(endpoint.split(separator: ":").last.flatMap { UInt16($0) }, endpoint)
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        XCTAssertGreaterThanOrEqual(descriptor, 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        XCTAssertTrue(status == 0 || errno == EINPROGRESS, String(cString: strerror(errno)))
        return Connection(descriptor: descriptor)
    }

    func testARealCoordinatorWelcomesAWorkerSpeakingZMTPItselfAndHandsItTasks() async throws {
        let endpoint = try await harness.startCoordinator()
        let connection = try await connect(to: endpoint)
        defer { close(connection.descriptor) }
        try await connection.write(ZMTPFraming.greeting + ZMTPFraming.ready(identity: Array("zmtp-worker".utf8)))
        var reader = ZMTPReader()
        let ready = try await connection.next(&reader) { event -> ArraySlice<UInt8>? in
            if case .command("READY", let body) = event { body } else { nil }
        }
        let properties = try XCTUnwrap(ready, "no READY from the coordinator:\n\(harness.allOutput)")
        XCTAssertTrue(
            properties.starts(with: [11] + Array("Socket-Type".utf8) + [0, 0, 0, 6] + Array("ROUTER".utf8)),
            "\(Array(properties))")

        func send(_ message: Message) async throws {
            var framed: [UInt8] = []
            WireCodec.encode(message).withUnsafeBytes { ZMTPFraming.appendMessage($0, to: &framed) }
            try await connection.write(framed)
        }
        func nextMessage() async throws -> Message? {
            try await connection.next(&reader) { event -> Message? in
                if case .message(let bytes) = event { try? WireCodec.decode(bytes) } else { nil }
            }
        }
        try await send(
            .workerHello(
                WorkerHello(workerID: "zmtp-worker", slots: 1, version: "test", hostname: "test", acceptsBatches: true))
        )
        guard case .welcome(let welcome)? = try await nextMessage() else {
            return XCTFail("no Welcome for a worker speaking ZMTP itself:\n\(harness.allOutput)")
        }
        XCTAssertTrue(welcome.acceptsBatches)

        // A no-op batch: its task comes to this worker, and the batch ends with the result it sends.
        try await harness.withClient(endpoint) { client in
            let batch = Task { () -> UInt32 in
                var succeeded: UInt32 = 0
                for try await event in await client.submit(
                    SubmitBatch(requestID: "", items: [BatchItem(source: "noop")], kind: .noop))
                {
                    if case .finished(let finished) = event { succeeded = finished.succeeded }
                }
                return succeeded
            }
            guard case .taskAssignment(let assignment)? = try await nextMessage() else {
                batch.cancel()
                return XCTFail("no assignment for the worker speaking ZMTP itself:\n\(harness.allOutput)")
            }
            try await send(
                .taskResult(
                    TaskResult(
                        taskID: assignment.taskID, attempt: assignment.attempt,
                        outcome: .output(TaskOutput(data: [])), taskKey: assignment.taskKey)))
            let succeeded = try await batch.value
            XCTAssertEqual(succeeded, 1)
            await client.close()
        }
    }
}
