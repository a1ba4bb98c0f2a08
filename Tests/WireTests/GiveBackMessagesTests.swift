import Wire
import XCTest

/// Work stealing's messages (proto 340–345): `GiveBackTask`, `TaskGivenBack` and
/// `WorkerHello.give_back_threads` survive a round trip at their extremes, are read at the field numbers
/// the proto gives them, and a hello without the field (an older worker) reads as "never ask".
final class GiveBackMessagesTests: XCTestCase {
    private func roundTrip(_ message: Message) throws -> Message {
        try WireCodec.decode(WireCodec.encode(message))
    }

    func testTheAskAndBothAnswersRoundTrip() throws {
        for ask in [
            GiveBackTask(taskKey: 1, attempt: 0), GiveBackTask(taskKey: .max, attempt: .max),
            GiveBackTask(taskKey: 1 << 63 + 5, attempt: 101),
        ] {
            XCTAssertEqual(try roundTrip(.giveBackTask(ask)), .giveBackTask(ask))
        }
        for givenBack in [true, false] {
            let answer = TaskGivenBack(taskKey: 1 << 40, attempt: 3, givenBack: givenBack)
            XCTAssertEqual(try roundTrip(.taskGivenBack(answer)), .taskGivenBack(answer))
        }
    }

    func testTheFieldNumbersAreThoseOfTheProto() throws {
        let ask = ProtobufWriter.envelope(minor: 2, bodyField: 340) { body in
            body.uint(343, 77)
            body.uint(344, 4)
        }
        XCTAssertEqual(try WireCodec.decode(ask), .giveBackTask(GiveBackTask(taskKey: 77, attempt: 4)))
        let answer = ProtobufWriter.envelope(minor: 2, bodyField: 341) { body in
            body.uint(343, 77)
            body.uint(344, 4)
            body.uint(345, 1)
        }
        XCTAssertEqual(
            try WireCodec.decode(answer), .taskGivenBack(TaskGivenBack(taskKey: 77, attempt: 4, givenBack: true)))
    }

    func testTheCapabilityRoundTripsAndAnOlderWorkersHelloReadsAsNeverAsk() throws {
        var hello = WorkerHello(workerID: "w", slots: 2, acceptsBatches: true, acceptsChainedTasks: true)
        let older = WireCodec.encode(.workerHello(hello))
        guard case .workerHello(let read) = try WireCodec.decode(older) else { return XCTFail("not a hello") }
        XCTAssertEqual(read.giveBackThreads, 0, "without the field: never asked to give a task back")
        hello.giveBackThreads = 16
        XCTAssertEqual(try roundTrip(.workerHello(hello)), .workerHello(hello))
        XCTAssertGreaterThan(WireCodec.encode(.workerHello(hello)).count, older.count)
    }
}
