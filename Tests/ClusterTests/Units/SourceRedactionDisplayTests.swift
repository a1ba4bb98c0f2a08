import Foundation
import Logging
import XCTest

@testable import Cluster

/// Credentials in sources are masked by the places that show them without a process: every log line (the
/// `EscapingLogHandler` all commands log through) and `submit --json`'s summary. Status, the dashboard and
/// the CLI's lines: `SourceRedactionProcessTests`.
final class SourceRedactionDisplayTests: XCTestCase {
    private let secret = "http://alice:hunter2@h/x.jpg?X-Amz-Credential=AKIA-SECRET&X-Amz-Signature=SIG-SECRET"
    private let masked = "http://alice:***@h/x.jpg?X-Amz-Credential=***&X-Amz-Signature=***"

    func testEveryLogLineMasksCredentialsInItsMessageMetadataAndError() {
        let recorder = RecordingLogHandler()
        var logger = Logger(label: "test") { _ in EscapingLogHandler(wrapping: recorder) }
        logger.logLevel = .debug
        logger[metadataKey: "attached"] = .string(secret)
        logger.info(
            "downloading \(secret) now",
            metadata: [
                "source": .string(secret), "convertible": .stringConvertible(secret),
                "nested": .dictionary(["list": .array([.string(secret)])]),
            ])
        let events = recorder.events
        XCTAssertEqual(events.count, 1)
        for secretPart in ["hunter2", "AKIA-SECRET", "SIG-SECRET"] {
            XCTAssertFalse(events[0].contains(secretPart), events[0])
        }
        XCTAssertTrue(events[0].contains("downloading \(masked) now"), events[0])
        XCTAssertTrue(events[0].contains("source=\(masked)"), events[0])
        XCTAssertTrue(events[0].contains("attached=\(masked)"), events[0])
    }

    func testSubmitsJSONSummaryShowsTheMaskedSourceAndError() {
        let summary = BatchSummary(
            batchID: "b-1",
            items: [
                ItemOutcome(index: 0, source: secret, outputPath: nil, error: "\(secret): HTTP 404 Not Found")
            ])
        let text = BatchSummaryJSON.text(summary, seconds: 1)
        XCTAssertFalse(text.contains("hunter2") || text.contains("SIG-SECRET") || text.contains("AKIA-SECRET"), text)
        XCTAssertTrue(
            text.contains("\"source\" : \"http:\\/\\/alice:***@h")
                || text.contains("\"source\" : \"http://alice:***@h"), text)
        XCTAssertTrue(text.contains("HTTP 404 Not Found"), text)
    }
}
