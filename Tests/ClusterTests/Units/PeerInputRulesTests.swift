import Cluster
import XCTest

/// Identities and sources are checked where they enter the coordinator.
final class PeerInputRulesTests: XCTestCase {
    func testWorkerIDs() {
        for id in ["worker-1", "host.example.org-4242-a1b2c3", "gpu@rack_7:2"] {
            XCTAssertNil(PeerInputRules.workerIDProblem(id), id)
        }
        XCTAssertNotNil(PeerInputRules.workerIDProblem(""))
        XCTAssertNotNil(PeerInputRules.workerIDProblem(String(repeating: "w", count: 129)))
        let problem = PeerInputRules.workerIDProblem("w\u{1B}[2J\nforged")
        XCTAssertEqual(problem, #"the worker ID 'w\u{1B}[2J\nforged' has characters other than A-Z a-z 0-9 . _ - : @"#)
        XCTAssertNotNil(PeerInputRules.workerIDProblem("wörker"))
    }

    func testSources() {
        for source in ["https://example.org/a b.jpg", "/home/me/Zürich.png", "file:///tmp/x.jpg"] {
            XCTAssertNil(PeerInputRules.sourceProblem(source), source)
        }
        XCTAssertNotNil(PeerInputRules.sourceProblem(""))
        XCTAssertNotNil(PeerInputRules.sourceProblem(" \t"))
        XCTAssertNotNil(PeerInputRules.sourceProblem("http://x/\u{202E}gpj.exe"))
        XCTAssertNotNil(PeerInputRules.sourceProblem(String(repeating: "a", count: 8193)))
    }
}
