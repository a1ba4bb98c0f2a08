import Wire

/// What a worker or client of a pair of coordinators has witnessed (docs/failover.md, "The witnessed
/// position"): the furthest journal position an active coordinator sent it (`Envelope.witnessed`), which it
/// says back on its requests, hellos and heartbeats, so that a coordinator behind it does not take over on
/// its word. Positions only grow: a later term beats more records, and an older position is ignored.
public struct WitnessedPosition: Sendable, Equatable {
    /// The furthest position witnessed so far (`.empty`: none).
    public private(set) var furthest: JournalPosition = .empty

    /// Nothing witnessed yet.
    public init() {}

    /// A message from a coordinator carried `wire` (`nil`: none, as from a coordinator that runs alone).
    public mutating func witness(_ wire: WirePairPosition?) {
        guard let wire else { return }
        let position = JournalPosition(term: wire.term, records: wire.records)
        if position > furthest { furthest = position }
    }

    /// What a message to a coordinator carries: `nil` (no byte on the wire) until something was witnessed.
    public var wire: WirePairPosition? { furthest == .empty ? nil : furthest.wire }
}
