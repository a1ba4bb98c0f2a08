/// The version of the Shiftwork wire protocol that this build speaks.
///
/// Every ``Message`` travels inside an `Envelope` that carries both numbers. A receiver refuses an
/// envelope whose `major` differs from its own (``WireError/unsupportedMajorVersion(received:supported:)``);
/// a different `minor` is accepted: minor versions only add fields and messages that older peers ignore.
public enum WireProtocol {
    /// The major version: peers with different major versions cannot talk to each other.
    public static let major: UInt32 = 1
    /// The minor version: informational; raised when fields or messages are added compatibly.
    ///
    /// - 1: batch messages (`TaskAssignmentBatch`, `TaskResultBatch`, `ItemFinishedBatch`), task keys and
    ///   assignment sequences.
    /// - 2: ``RefusalCode`` in ``Refusal``, ``CancelBatch/requestID`` answered by ``CancelAccepted``, and
    ///   ``CancelTask/taskKey``. Peers of minor 1 keep working with peers of minor 2 (docs/protocol.md).
    /// - 3: data off the coordinator: ``TaskAssignment/keepOutput``, sinks (``SubmitBatch/sink``,
    ///   ``TaskAssignment/sink``, ``TaskOutput/location``), ``FailureCode/sink``, ``ItemStatus/location``.
    public static let minor: UInt32 = 3
}
