/// What a coordinator of a pair last was, as its journal recorded it: whether it may take over alone
/// after a restart, when it cannot hear its peer. Recorded on every change (`PairEffect.record`).
///
/// Only a coordinator that knows it holds the newest data may take over without hearing its peer: one
/// that was active while its peer was gone (nobody could have acknowledged anything it does not hold).
/// One that was passive, or active with its peer in step, may have been replaced while it was down: it
/// waits for its peer and follows it, so that it never takes over with older data.
public enum PairHistory: String, Sendable, CaseIterable {
    /// A journal without a pair record: a first start (both empty), or a single coordinator's data.
    case none
    /// It was active, and its peer applied everything it acknowledged.
    case activeWithPeer = "active-with-peer"
    /// It was active and its peer was gone: it holds what nobody else does.
    case activeAlone = "active-alone"
    /// It was passive: the other one was active.
    case passive

    /// Whether a coordinator restarted with this history may take over without hearing its peer.
    var mayTakeOverAlone: Bool {
        switch self {
        case .none, .activeAlone: true
        case .activeWithPeer, .passive: false
        }
    }
}
