import XCTest

@testable import Cluster

/// `--coordinator A,B` / `SHIFTWORK_COORDINATOR=A,B`: the list a worker or client turns through.
final class CoordinatorEndpointsTests: XCTestCase {
    func testAListKeepsItsOrderWithoutSpacesOrDuplicates() throws {
        let endpoints = try CoordinatorEndpoints(parsing: " tcp://a:5570 ,tcp://b:5570, tcp://a:5570")
        XCTAssertEqual(endpoints.all, ["tcp://a:5570", "tcp://b:5570"])
        XCTAssertTrue(endpoints.canTurn)
        XCTAssertEqual(endpoints.description, "tcp://a:5570,tcp://b:5570")
    }

    func testOneEndpointIsAListOfOneThatNeverTurns() throws {
        let endpoints = try CoordinatorEndpoints(parsing: "tcp://127.0.0.1:5570")
        XCTAssertEqual(endpoints.all, ["tcp://127.0.0.1:5570"])
        XCTAssertFalse(endpoints.canTurn)
        XCTAssertEqual(endpoints.next(after: 0).endpoint, "tcp://127.0.0.1:5570")
        XCTAssertEqual(
            try CoordinatorEndpoints(parsing: "tcp://a:1,tcp://a:1").all, ["tcp://a:1"], "a duplicate counts once")
    }

    func testTurningGoesRoundRobin() throws {
        let endpoints = try CoordinatorEndpoints(["tcp://a:1", "ipc:///tmp/b", "inproc://c"])
        XCTAssertEqual(endpoints.next(after: 0).endpoint, "ipc:///tmp/b")
        XCTAssertEqual(endpoints.next(after: 1).endpoint, "inproc://c")
        XCTAssertEqual(endpoints.next(after: 2).index, 0)
        XCTAssertEqual(endpoints.next(after: 2).endpoint, "tcp://a:1")
    }

    func testAnEmptyEntryIsRefusedWithItsPosition() {
        for (list, position) in [
            ("tcp://a:1,,tcp://b:2", 2), (",tcp://a:1", 1), ("tcp://a:1,", 2), ("tcp://a:1, ,tcp://b:2", 2),
        ] {
            XCTAssertThrowsError(try CoordinatorEndpoints(parsing: list), list) { error in
                XCTAssertEqual(error as? CoordinatorEndpointsError, .emptyEntry(position: position, list: list))
                XCTAssertTrue("\(error)".contains("empty entry (number \(position))"), "\(error)")
            }
        }
        XCTAssertThrowsError(try CoordinatorEndpoints([])) { error in
            XCTAssertEqual(error as? CoordinatorEndpointsError, CoordinatorEndpointsError.none)
        }
    }

    func testABadEndpointIsNamedInTheError() {
        for bad in ["coordinator:5570", "http://a:5570", "tcp://", "tcp://a b:1"] {
            XCTAssertThrowsError(try CoordinatorEndpoints(parsing: "tcp://good:5570,\(bad)"), bad) { error in
                XCTAssertEqual(error as? CoordinatorEndpointsError, .malformed(endpoint: bad))
                XCTAssertTrue("\(error)".contains("'\(bad)' is not a coordinator endpoint"), "\(error)")
                XCTAssertTrue("\(error)".contains("tcp://HOST:PORT"), "\(error)")
            }
        }
    }

    func testANameFromTheNetworkOrEnvironmentIsEscapedInTheError() {
        XCTAssertThrowsError(try CoordinatorEndpoints(parsing: "tcp://a:1,evil\u{1B}[2J")) { error in
            XCTAssertFalse("\(error)".contains("\u{1B}"), "\(error)")
        }
    }
}
