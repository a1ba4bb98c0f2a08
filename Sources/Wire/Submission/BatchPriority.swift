/// A batch's priority (``SubmitBatch/priority``): how large a share of the cluster's free slots its tasks
/// get against other batches waiting at the same time. A rule of the protocol, so that clients and the
/// coordinator check it the same way.
///
/// The range is -10...10, 0 the default; `low`, `normal` and `high` name -5, 0 and 5. Each 2 points
/// double a batch's weight (``weight(of:)``): a batch of priority 10 gets 1,024 dispatches for every one
/// of a batch of priority -10, and a lower priority still progresses (fair share, not strict priority).
public enum BatchPriority {
    /// The priorities a batch may have.
    public static let range: ClosedRange<Int32> = -10...10
    /// A batch without a priority.
    public static let normal: Int32 = 0

    /// The names a client may use instead of a number, with their values.
    public static let names: [(name: String, value: Int32)] = [("low", -5), ("normal", 0), ("high", 5)]

    /// Why `priority` is not a valid priority, or `nil` when it is.
    public static func problem(_ priority: Int32) -> String? {
        guard !range.contains(priority) else { return nil }
        return "priority \(priority) is out of range: give \(range.lowerBound)...\(range.upperBound) "
            + "(higher runs sooner), or \(names.map { "\($0.name) (\($0.value))" }.joined(separator: ", "))"
    }

    /// Reads a priority a user typed: a number in ``range`` or one of ``names``.
    ///
    /// - Throws: ``BatchPriorityError`` saying the valid range when it is neither.
    public static func parse(_ text: String) throws(BatchPriorityError) -> Int32 {
        let trimmed = text.lowercased()
        if let named = names.first(where: { $0.name == trimmed }) { return named.value }
        guard let value = Int32(trimmed) else {
            throw BatchPriorityError(
                "'\(text)' is not a priority: give a number \(range.lowerBound)...\(range.upperBound) "
                    + "(higher runs sooner), or \(names.map(\.name).joined(separator: ", "))")
        }
        if let problem = problem(value) { throw BatchPriorityError(problem) }
        return value
    }

    /// The weight of a priority in the coordinator's fair share: 32 for 0, doubled by each 2 points up
    /// and halved by each 2 points down (1 at -10, 1,024 at 10). A priority outside ``range`` is clamped.
    public static func weight(of priority: Int32) -> UInt64 {
        let clamped = min(max(priority, range.lowerBound), range.upperBound)
        return weights[Int(clamped - range.lowerBound)]
    }

    /// 2^((p + 10) / 2), rounded, for p in -10...10.
    private static let weights: [UInt64] = [
        1, 1, 2, 3, 4, 6, 8, 11, 16, 23, 32, 45, 64, 91, 128, 181, 256, 362, 512, 724, 1_024,
    ]
}

/// A priority that cannot be used; the message says the valid range.
public struct BatchPriorityError: Error, CustomStringConvertible, Equatable {
    public let description: String
    init(_ description: String) { self.description = description }
}
