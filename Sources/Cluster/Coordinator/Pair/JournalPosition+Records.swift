import Wire

extension JournalPosition {
    /// The position after `record`, the same on both coordinators of a pair: every record counts but those
    /// that only say where the journal stands or what this coordinator is (`started`, `pairHistory`,
    /// `pairPosition`, which sets the position outright); `pairTerm` starts its term.
    func advanced(by record: JournalRecord) -> JournalPosition {
        switch record {
        case .started, .pairHistory: self
        case .pairPosition(let term, let records): JournalPosition(term: term, records: records)
        case .pairTerm(let newTerm): JournalPosition(term: max(term, newTerm), records: records &+ 1)
        case .batchAccepted, .itemFinished, .itemsAdded, .batchCancelled, .batchRetried, .attemptFailed,
            .batchRetired:
            JournalPosition(term: term, records: records &+ 1)
        }
    }

    /// The position on the wire.
    var wire: WirePairPosition { WirePairPosition(term: term, records: records) }

    /// A position from the wire (`.empty` when it was left out).
    init(_ wire: WirePairPosition?) {
        self.init(term: wire?.term ?? 0, records: wire?.records ?? 0)
    }
}

extension JournalRecord {
    /// Whether the record travels to the peer of a pair: all but what this coordinator itself last was.
    var isReplicated: Bool {
        if case .pairHistory = self { return false }
        return true
    }
}
