import XCTest

@testable import Cluster

/// `BatchSummary`'s counts: the images/s of a run's summary divides only the images written.
final class BatchSummaryTests: XCTestCase {
    func testOnlyWrittenImagesCountAsProcessed() {
        let summary = BatchSummary(
            batchID: "b-1",
            items: [
                ItemOutcome(index: 0, source: "list.txt", outputPath: nil, error: nil, expandedInto: 2),
                ItemOutcome(index: 1, source: "a.jpg", outputPath: "/out/a.jpg", error: nil),
                ItemOutcome(index: 2, source: "b.jpg", outputPath: "/out/b.jpg", error: nil),
                ItemOutcome(index: 3, source: "gone.jpg", outputPath: nil, error: "gone.jpg: no such file"),
                ItemOutcome(index: 4, source: "c.jpg", outputPath: nil, error: "cancelled", wasCancelled: true),
            ])
        XCTAssertEqual(summary.imagesWritten, 2)
        XCTAssertEqual(summary.succeeded, 3)
        XCTAssertEqual(summary.failed, 1)
        XCTAssertEqual(summary.cancelled, 1)
    }
}
