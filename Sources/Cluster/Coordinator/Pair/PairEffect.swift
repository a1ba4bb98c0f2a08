/// What a coordinator of a pair does about an event (`CoordinatorPair.handle`), in order.
public enum PairEffect: Sendable, Equatable {
    /// Serve: it has become active. `takeover` is true for a failover (a new term starts: journal it
    /// before serving), false when it leads a pair that starts together.
    case becomeActive(takeover: Bool, reason: String)
    /// Follow the peer: refuse clients and workers, and apply the peer's journal stream (catching up first).
    case becomePassive(reason: String)
    /// Journal what it now is, so that a restart knows whether it may take over alone.
    case record(PairHistory)
    /// Answer the request that came in.
    case accept
    /// Refuse the request that came in, saying why and where to turn (the client or worker tries the next
    /// coordinator of its list).
    case refuse(reason: String)
    /// A request's witnessed position is one neither coordinator could have written
    /// (`CoordinatorPair.implausibility(of:now:)`): counted and logged; the request is handled as one without it
    /// (the effects that follow).
    case implausibleWitness(reason: String)
    /// The two are configured alike (both primary, or both backup), or another fault an operator must
    /// mend: logged as an error at once and again on every announcement. It never makes two active.
    case misconfigured(reason: String)
    /// Both were found active (a partition that cut the pair apart while peers reached both): the one with
    /// the older data steps down; what it acknowledged alone is reported.
    case splitBrain(reason: String)
}
