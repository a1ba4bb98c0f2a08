/// What the coordinator accepts in the identities and sources that peers send, checked where they
/// enter: a worker's ID in its hello, each item's source in a submitted batch or a manifest.
///
/// Everything shown to people is escaped anyway (`PrintableText`); these rules keep values that no
/// honest peer sends (control characters, megabyte-long names, empty sources) out of the coordinator's
/// state, its journal and the status it serves.
public enum PeerInputRules {
    /// The longest worker ID accepted, in UTF-8 bytes.
    public static let maxWorkerIDBytes = 128
    /// The longest source (URL or path) accepted, in UTF-8 bytes.
    public static let maxSourceBytes = 8192
    /// The most slots a worker may offer in its `WorkerHello` (and `shiftwork worker --slots` takes): far
    /// above what a machine runs at once (the default is twice the compute threads), and low enough that
    /// the coordinator's per-worker bookkeeping (one free-slot bucket per slot) stays small.
    public static let maxWorkerSlots = 4096

    /// Why a worker's `slots` is refused, or `nil` when it is fine: 0 (taken as 1) to ``maxWorkerSlots``.
    public static func workerSlotsProblem(_ slots: UInt32) -> String? {
        guard slots > maxWorkerSlots else { return nil }
        return "the worker offers \(slots) slots, more than the limit of \(maxWorkerSlots)"
    }

    /// Why `workerID` is refused, or `nil` when it is fine: 1 to 128 of `A–Z a–z 0–9 . _ - : @`
    /// (host names, container names and the default `HOST-PID-RANDOM` fit).
    public static func workerIDProblem(_ workerID: String) -> String? {
        if workerID.isEmpty { return "the worker ID is empty" }
        if workerID.utf8.count > maxWorkerIDBytes {
            return "the worker ID is \(workerID.utf8.count) bytes long, more than \(maxWorkerIDBytes)"
        }
        let allowed = workerID.unicodeScalars.allSatisfy { scalar in
            switch scalar {
            case "a"..."z", "A"..."Z", "0"..."9", ".", "_", "-", ":", "@": true
            default: false
            }
        }
        return allowed
            ? nil : "the worker ID '\(PrintableText.escape(workerID))' has characters other than A-Z a-z 0-9 . _ - : @"
    }

    /// Why `source` is refused as an item's source, or `nil` when it is fine: not empty or blank, at most
    /// 8 KiB, and free of control characters and bidirectional overrides.
    public static func sourceProblem(_ source: String) -> String? {
        if source.allSatisfy(\.isWhitespace) {
            return "the source is empty: give an image URL (http, https, file) or a path"
        }
        if source.utf8.count > maxSourceBytes {
            return "the source is \(source.utf8.count) bytes long, more than \(maxSourceBytes)"
        }
        if source.unicodeScalars.contains(where: PrintableText.needsEscape) {
            return "the source '\(PrintableText.escape(source))' contains control characters"
        }
        return nil
    }
}
