import Cluster
import Foundation
import Messaging

/// Runs `body` with a client connected to the coordinators `option` names (with its CurveZMQ keys, if
/// given), and always closes the client (and with it its ZeroMQ context) afterwards, whatever `body` did.
///
/// With several endpoints (a pair, docs/failover.md), the client turns to the next when its own has had no
/// live connection for `ClusterDefaults.clientSilenceTimeout`, or refuses a request as passive; each turn is
/// said on stderr. Requests unanswered then go to the next coordinator, and a batch being followed is
/// re-attached there by its ID (`ClusterClient+Turning.swift`).
func withCoordinator<Result: Sendable>(
    _ option: CoordinatorEndpointOption, responseTimeout: Duration = .seconds(5),
    _ body: (ClusterClient) async throws -> Result
) async throws -> Result {
    try await ClusterClient.withConnection(
        to: try option.endpoints(), responseTimeout: responseTimeout, socketOptions: try option.socketOptions(),
        onTurn: { turn in FileHandle.standardError.write(Data("\(turn)\n".utf8)) }, body)
}
