/// How far a coordinator's journal goes, for comparing two coordinators' data: `term` grows with each
/// takeover (a coordinator that becomes active by failover starts a new term, kept in its journal: the
/// primary's terms are even, the backup's odd, so that two takeovers apart never share one), and
/// `records` counts the records written within the history so far. A later term is newer whatever its
/// records; within a term, more records are newer.
public struct JournalPosition: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The term of the last takeover (0: none ever happened on this data).
    public var term: UInt64
    /// Records written in all.
    public var records: UInt64

    /// A position; `JournalPosition.empty` is a journal that holds nothing.
    public init(term: UInt64, records: UInt64) {
        self.term = term
        self.records = records
    }

    /// A journal that holds nothing.
    public static let empty = JournalPosition(term: 0, records: 0)

    public static func < (lhs: JournalPosition, rhs: JournalPosition) -> Bool {
        (lhs.term, lhs.records) < (rhs.term, rhs.records)
    }

    public var description: String { "term \(term), record \(records)" }
}
