/// Why a request or a peer was refused, carried by ``Refusal`` (minor 2). Receivers act on the code;
/// ``Refusal/reason`` is for the user and may be worded differently by any version.
///
/// A numeric value that this version does not know (sent by a newer peer) decodes as ``unspecified``.
public enum RefusalCode: UInt32, Sendable, Equatable, CaseIterable {
    /// No code: a minor-1 peer, or a code this version does not know. The reason says why.
    case unspecified = 0
    /// The coordinator does not know this worker (it restarted, or declared the worker dead): the worker
    /// registers again with ``WorkerHello``.
    case unknownWorker = 1
    /// The envelope's major version is not the receiver's.
    case unsupportedVersion = 2
    /// ``CancelBatch`` or ``FetchResults`` named a batch the coordinator does not know.
    case unknownBatch = 3
    /// A request that cannot be carried out as sent (a batch without items, a kind not supported).
    case invalidRequest = 4
    /// Over one of the coordinator's limits (items per batch, unfinished items per client).
    case limit = 5
    /// ``FetchResults`` to a coordinator that keeps no results (it runs without a data directory).
    case noStoredResults = 6
    /// The coordinator could not take the request now (for example, its journal cannot be written).
    case unavailable = 7
    /// The coordinator is the passive one of a pair (docs/failover.md): the worker or client turns to the
    /// other coordinator of its list. Older peers read it as ``unspecified``.
    case passive = 8
    /// The sender's CurveZMQ key lacks the role the request needs (a worker key submitting a batch, a client
    /// key registering as a worker), or the batch it names was submitted by another client and the key is
    /// not an administrator's. The reason names the role needed. Older peers read it as ``unspecified``.
    case forbidden = 160
}
