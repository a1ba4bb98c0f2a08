import Cluster
import Foundation
import Messaging

/// Runs `body` with a client connected to the coordinator `option` names (with its CurveZMQ keys, if
/// given), and always closes the client (and with it its ZeroMQ context) afterwards, whatever `body` did.
///
/// With several endpoints (a pair, docs/failover.md), a `body` whose request got no answer within
/// `responseTimeout` runs again with a client of the next endpoint, once per endpoint, each turn said on
/// stderr; the last endpoint's error is the one thrown.
func withCoordinator<Result: Sendable>(
    _ option: CoordinatorEndpointOption, responseTimeout: Duration = .seconds(5),
    _ body: (ClusterClient) async throws -> Result
) async throws -> Result {
    let endpoints = try option.endpoints()
    let socketOptions = try option.socketOptions()
    var index = 0
    while true {
        let endpoint = endpoints.all[index]
        do {
            return try await withClient(
                of: endpoint, responseTimeout: responseTimeout, socketOptions: socketOptions, body)
        } catch let error as ClusterClientError where error.meansSilence && index + 1 < endpoints.all.count {
            index += 1
            FileHandle.standardError.write(
                Data(
                    "no answer from the coordinator at \(PrintableText.escape(endpoint)) within \(responseTimeout): turning to \(PrintableText.escape(endpoints.all[index]))\n"
                        .utf8))
        }
    }
}

/// Runs `body` with a client of `endpoint` and closes it afterwards, whatever `body` did.
private func withClient<Result: Sendable>(
    of endpoint: String, responseTimeout: Duration, socketOptions: SocketOptions,
    _ body: (ClusterClient) async throws -> Result
) async throws -> Result {
    let client = try await ClusterClient(
        endpoint: endpoint, responseTimeout: responseTimeout, socketOptions: socketOptions)
    let result: Swift.Result<Result, any Error>
    do {
        result = .success(try await body(client))
    } catch {
        result = .failure(error)
    }
    await client.close()
    return try result.get()
}
