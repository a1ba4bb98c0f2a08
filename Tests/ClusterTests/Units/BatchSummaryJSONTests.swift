import Foundation
import XCTest

@testable import Cluster

/// `submit --json`'s document is written by `BatchSummaryJSON` (`JSONValue`) instead of `JSONSerialization`:
/// the bytes must be the ones `JSONSerialization` writes for the same values, whatever the values hold.
final class BatchSummaryJSONTests: XCTestCase {
    /// The dictionary `submit --json` gave `JSONSerialization` before (the reference).
    private func reference(_ summary: BatchSummary, seconds: Double) throws -> String {
        let object: [String: Any] = [
            "batch": summary.batchID, "succeeded": summary.succeeded, "failed": summary.failed,
            "cancelled": summary.cancelled,
            "seconds": (seconds * 1000).rounded() / 1000,
            "items": summary.items.map { item -> [String: Any] in
                var entry: [String: Any] = ["index": item.index, "source": item.source]
                if let path = item.outputPath { entry["output"] = path }
                if item.inSink { entry["in_sink"] = true }
                if let existing = item.existingPath { entry["existing_file_kept"] = existing }
                if let error = item.error { entry["error"] = error }
                if item.expandedInto > 0 { entry["manifest_items"] = item.expandedInto }
                if item.wasCancelled { entry["cancelled"] = true }
                if !item.warnings.isEmpty { entry["warnings"] = item.warnings }
                return entry
            },
        ]
        let data = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])
        return String(decoding: data, as: UTF8.self)
    }

    func testEveryKindOfItemMatchesJSONSerialization() throws {
        let summary = BatchSummary(
            batchID: "b-1f2e3d4c",
            items: [
                ItemOutcome(index: 0, source: "list.txt", outputPath: nil, error: nil, expandedInto: 2),
                ItemOutcome(
                    index: 1, source: "https://example.com/a.jpg?x=1&y=\"2\"", outputPath: "/out/a.jpg", error: nil,
                    existingPath: "/out/a.jpg", warnings: ["an ICC profile was dropped", "second\twarning"]),
                ItemOutcome(
                    index: 2, source: "s3://bucket/b.jpg", outputPath: "s3://bucket/out/b.jpg", error: nil, inSink: true
                ),
                ItemOutcome(
                    index: 3, source: "gone\\dir/ünïcødé 📷.jpg", outputPath: nil, error: "gone: no such file\nnext line"
                ),
                ItemOutcome(index: 4, source: "c.jpg", outputPath: nil, error: "cancelled", wasCancelled: true),
                ItemOutcome(
                    index: 5, source: "ctl\u{0}\u{1}\u{8}\u{c}\r\u{1f}\u{7f}\u{2028}.jpg", outputPath: nil, error: ""),
            ])
        for seconds in [0, 0.0004, 0.001, 0.04, 0.5, 1, 2.15349, 12.5, 59.999, 3_600, 86_400.123, 1e7 + 0.25] {
            XCTAssertEqual(
                BatchSummaryJSON.text(summary, seconds: seconds), try reference(summary, seconds: seconds),
                "seconds \(seconds)")
        }
    }

    func testAnEmptyBatchMatchesJSONSerialization() throws {
        let summary = BatchSummary(batchID: "", items: [])
        XCTAssertEqual(BatchSummaryJSON.text(summary, seconds: 0.2), try reference(summary, seconds: 0.2))
    }

    func testRandomSecondsAndTextsMatchJSONSerialization() throws {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("aZ09 /\\\"'\t\n\u{0}\u{1b}é€😀-_.:?&=%")
        for _ in 0..<200 {
            let text = String(
                (0..<Int.random(in: 0...12, using: &generator)).map { _ in
                    alphabet[Int.random(in: alphabet.indices, using: &generator)]
                })
            let seconds = Double.random(in: 0...100_000, using: &generator)
            let summary = BatchSummary(
                batchID: text,
                items: [
                    ItemOutcome(
                        index: Int.random(in: 0...1_000_000, using: &generator), source: text, outputPath: text,
                        error: nil)
                ])
            XCTAssertEqual(
                BatchSummaryJSON.text(summary, seconds: seconds), try reference(summary, seconds: seconds),
                "text \(text.debugDescription), seconds \(seconds)")
        }
    }
}
