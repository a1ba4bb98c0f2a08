import Cluster
import Fetching
import Foundation
import Glibc

/// Shows a batch's progress and its summary, in one of three styles:
/// - on a terminal, a progress bar with counts, rate and ETA, failures printed above it;
/// - otherwise, one plain line per finished item (logs, CI);
/// - with `--json`, nothing while running and one JSON document at the end (scripts).
///
/// Batch IDs, sources and errors came from the network: lines show them through `PrintableText.escape`
/// (JSON keeps the exact values).
final class BatchReporter: @unchecked Sendable {
    enum Style { case bar, lines, json }

    // `lock` guards the mutable state below; progress events arrive from the client's task.
    private let lock = NSLock()
    private let style: Style
    private var started = ContinuousClock.now
    private var failures = 0
    private var batchID = ""
    /// The submission attached to an existing batch (`submit --key`).
    private var attached = false
    /// A retry found nothing to re-run (said when it was answered; no summary line follows).
    private var nothingToRetry = false

    /// Chooses the style: JSON when asked, a bar when standard output is a terminal, lines otherwise.
    init(json: Bool) {
        style = json ? .json : (isatty(STDOUT_FILENO) != 0 ? .bar : .lines)
    }

    /// Handles one progress event.
    func report(_ progress: BatchProgress) {
        lock.lock()
        defer { lock.unlock() }
        switch progress {
        case .accepted(let batchID, let count), .attached(let batchID, let count):
            self.batchID = batchID
            started = .now
            if case .attached = progress { attached = true }
            if style != .json {
                let note = attached ? " (attached: submitted before with this --key; no second batch was made)" : ""
                print("batch \(PrintableText.escape(batchID)): \(count) item\(count == 1 ? "" : "s")\(note)")
            }
            if style == .bar { drawBar(done: 0, total: count) }
        case .retrying(let batchID, let count, let batchCount):
            self.batchID = batchID
            started = .now
            let id = PrintableText.escape(batchID)
            if style != .json {
                if count == 0 {
                    nothingToRetry = true
                    print("batch \(id): nothing to retry: every item of its \(batchCount) succeeded")
                } else {
                    print("batch \(id): retrying \(count) of its \(batchCount) item\(batchCount == 1 ? "" : "s")")
                }
            }
            if style == .bar && count > 0 { drawBar(done: 0, total: count) }
        case .grew(let count, let total):
            switch style {
            case .json: break
            case .lines: print("a manifest added \(count) item\(count == 1 ? "" : "s"); the batch has \(total)")
            case .bar: break  // the bar's total grows with the next item
            }
        case .item(let outcome, let done, let total):
            if outcome.error != nil { failures += 1 }
            switch style {
            case .json:
                break
            case .lines:
                print(Self.line(for: outcome, done: done, total: total))
            case .bar:
                if outcome.error != nil {
                    print("\r\u{1B}[2K" + Self.line(for: outcome, done: done, total: total))
                }
                drawBar(done: done, total: total)
            }
        }
        fflush(nil)
    }

    /// Prints the summary (or the JSON document); returns whether every item succeeded.
    func summarize(_ summary: BatchSummary) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        let elapsed = Self.seconds(ContinuousClock.now - started)
        if nothingToRetry && style != .json { return true }
        switch style {
        case .json:
            print(Self.json(summary, seconds: elapsed))
        case .bar, .lines:
            if style == .bar { print("") }
            // Only images processed count: a failed download or a manifest is not an image per second.
            let rate = elapsed > 0 ? String(format: ", %.1f images/s", Double(summary.imagesWritten) / elapsed) : ""
            print(
                "\(summary.items.count) item\(summary.items.count == 1 ? "" : "s"): \(summary.succeeded) succeeded, \(summary.failed) failed\(summary.cancelled > 0 ? ", \(summary.cancelled) cancelled" : "") (\(String(format: "%.1f", elapsed)) s\(rate))"
            )
            let inSink = summary.items.filter(\.inSink).count
            if inSink > 0 {
                print(
                    "\(inSink) output\(inSink == 1 ? " was" : "s were") written by the workers into the sink (above: where each went; `shiftwork status \(PrintableText.escape(summary.batchID))` lists them)"
                )
            }
            if summary.renamed > 0 {
                print(
                    "\(summary.renamed) output\(summary.renamed == 1 ? "" : "s") took a new name: a file of that name was already in the output directory (--overwrite replaces such files)"
                )
            }
        }
        fflush(nil)
        return summary.allSucceeded
    }

    private func drawBar(done: Int, total: Int) {
        let width = 30
        let filled = total > 0 ? width * done / total : width
        let elapsed = Self.seconds(ContinuousClock.now - started)
        let rate = elapsed > 0 ? Double(done) / elapsed : 0
        let eta = rate > 0 && done < total ? String(format: "ETA %.0fs", Double(total - done) / rate) : ""
        let bar = String(repeating: "=", count: filled) + String(repeating: " ", count: width - filled)
        let failed = failures > 0 ? "  \(failures) failed" : ""
        print(
            "\r\u{1B}[2K[\(bar)] \(done)/\(total)  \(String(format: "%.1f", rate)) img/s  \(eta)\(failed)",
            terminator: "")
    }

    private static func line(for outcome: ItemOutcome, done: Int, total: Int) -> String {
        let source = PrintableText.escape(SourceRedaction.redact(outcome.source))
        let width = String(total).count
        let counter = "[\(String(repeating: " ", count: max(0, width - String(done).count)))\(done)/\(total)]"
        if let path = outcome.outputPath {
            let renamed =
                outcome.existingPath.map { " (\(PrintableText.escape($0)) exists; --overwrite replaces it)" } ?? ""
            let warnings = outcome.warnings.map { " (warning: \(PrintableText.escape($0)))" }.joined()
            return "\(counter) ok      \(source) -> \(PrintableText.escape(path))\(renamed)\(warnings)"
        }
        if outcome.error == nil {
            return
                "\(counter) ok      \(source): a manifest of \(outcome.expandedInto) image\(outcome.expandedInto == 1 ? "" : "s")"
        }
        let error = PrintableText.escape(SourceRedaction.redactURLs(in: outcome.error ?? "unknown error"))
        // Errors usually name their input already; do not say it twice.
        let message = error.hasPrefix(source) ? error : "\(source): \(error)"
        return "\(counter) \(outcome.wasCancelled ? "CANCELLED" : "FAILED ") \(message)"
    }

    private static func seconds(_ duration: Duration) -> Double {
        let parts = duration.components
        return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
    }

    /// The JSON document (written without `JSONSerialization`'s dynamic casts: `BatchSummaryJSON`).
    private static func json(_ summary: BatchSummary, seconds: Double) -> String {
        BatchSummaryJSON.text(summary, seconds: seconds)
    }
}
