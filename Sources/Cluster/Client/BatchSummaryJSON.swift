import Fetching

/// A batch's summary as `shiftwork submit --json` (and every command that follows a batch) prints it: the batch, its counts,
/// the seconds it took (to the millisecond) and every item's outcome, keys sorted.
package enum BatchSummaryJSON {
    /// The summary's JSON document, pretty-printed (see `JSONValue`).
    package static func text(_ summary: BatchSummary, seconds: Double) -> String {
        JSONValue.object([
            ("batch", .string(summary.batchID)), ("succeeded", .integer(summary.succeeded)),
            ("failed", .integer(summary.failed)), ("cancelled", .integer(summary.cancelled)),
            ("seconds", .number((seconds * 1000).rounded() / 1000)),
            ("items", .array(summary.items.map(item))),
        ]).text
    }

    private static func item(_ item: ItemOutcome) -> JSONValue {
        var members: [(key: String, value: JSONValue)] = [
            ("index", .integer(item.index)), ("source", .string(SourceRedaction.redact(item.source))),
        ]
        if let path = item.outputPath { members.append(("output", .string(path))) }
        if item.inSink { members.append(("in_sink", .bool(true))) }
        if let existing = item.existingPath { members.append(("existing_file_kept", .string(existing))) }
        if let error = item.error { members.append(("error", .string(SourceRedaction.redactURLs(in: error)))) }
        if item.expandedInto > 0 { members.append(("manifest_items", .integer(item.expandedInto))) }
        if item.wasCancelled { members.append(("cancelled", .bool(true))) }
        if !item.warnings.isEmpty { members.append(("warnings", .array(item.warnings.map(JSONValue.string)))) }
        return .object(members)
    }
}
