import Cluster
import Foundation

/// Prints a batch's progress, one line per finished item, and its summary.
enum BatchReporter {
    /// Prints one progress event to standard output.
    @Sendable static func report(_ progress: BatchProgress) {
        switch progress {
        case .accepted(let batchID, let count):
            print("batch \(batchID): \(count) item\(count == 1 ? "" : "s")")
        case .item(let outcome, let done, let total):
            let width = String(total).count
            let counter = "[\(String(done).leftPadded(to: width))/\(total)]"
            if let path = outcome.outputPath {
                print("\(counter) ok      \(outcome.source) -> \(path)")
            } else {
                let error = outcome.error ?? "unknown error"
                // Errors usually name their input already; do not say it twice.
                let message = error.hasPrefix(outcome.source) ? error : "\(outcome.source): \(error)"
                print("\(counter) FAILED  \(message)")
            }
        }
        fflush(nil)
    }

    /// Prints the summary; returns whether every item succeeded.
    static func summarize(_ summary: BatchSummary) -> Bool {
        print("\(summary.items.count) item\(summary.items.count == 1 ? "" : "s"): \(summary.succeeded) succeeded, \(summary.failed) failed")
        return summary.failed == 0
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}
