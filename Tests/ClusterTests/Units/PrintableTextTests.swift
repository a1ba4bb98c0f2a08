import Cluster
import Logging
import XCTest

/// Network values are escaped before they reach a terminal or a log line.
final class PrintableTextTests: XCTestCase {
    func testControlCharactersAndBidirectionalOverridesAreWrittenVisibly() {
        XCTAssertEqual(PrintableText.escape("worker-1"), "worker-1")
        XCTAssertEqual(PrintableText.escape("Zürich ✓ 東京"), "Zürich ✓ 東京")
        XCTAssertEqual(PrintableText.escape("a\nb\rc\td"), #"a\nb\rc\td"#)
        XCTAssertEqual(PrintableText.escape("\u{1B}[2J\u{1B}[31mred"), #"\u{1B}[2J\u{1B}[31mred"#)
        XCTAssertEqual(PrintableText.escape("\u{9B}31m \u{7F} \u{0}"), #"\u{9B}31m \u{7F} \u{0}"#)
        XCTAssertEqual(PrintableText.escape("abc\u{202E}gpj.exe"), #"abc\u{202E}gpj.exe"#)
        XCTAssertEqual(PrintableText.escape("line\u{2028}separator"), #"line\u{2028}separator"#)
    }

    func testALogLineCannotBeForgedThroughTheMessageOrTheMetadata() {
        let recorder = RecordingLogHandler()
        var logger = Logger(label: "test") { _ in EscapingLogHandler(wrapping: recorder) }
        logger.logLevel = .debug
        logger[metadataKey: "attached"] = "x\ny"
        let forged = "evil\n2026-11-23T10:00:00+0000 info shiftwork : worker registered\u{1B}[2J"
        logger.info(
            "worker \(forged) said hello",
            metadata: [
                "worker": "\(forged)", "nested": .dictionary(["list": .array([.string("a\rb")])]),
            ])
        logger.warning("failed", metadata: ["convertible": .stringConvertible(forged)])
        let events = recorder.events
        XCTAssertEqual(events.count, 2)
        for event in events {
            XCTAssertFalse(event.contains("\n") || event.contains("\r") || event.contains("\u{1B}"), event)
        }
        XCTAssertTrue(events[0].contains(#"worker evil\n2026-11-23T10:00:00+0000 info"#), events[0])
        XCTAssertTrue(events[0].contains(#"\u{1B}[2J"#), events[0])
        XCTAssertTrue(events[0].contains(#"\rb"#), events[0])  // nested values are rendered with their own quoting
        XCTAssertTrue(events[0].contains(#"x\ny"#), events[0])
        XCTAssertTrue(events[1].contains(#"evil\n2026"#), events[1])
    }
}
