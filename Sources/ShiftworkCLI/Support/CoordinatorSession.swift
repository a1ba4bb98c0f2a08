import Cluster

/// Runs `body` with a client connected to the coordinator `option` names (with its CurveZMQ keys, if
/// given), and always closes the client (and with it its ZeroMQ context) afterwards, whatever `body` did.
func withCoordinator<Result: Sendable>(
    _ option: CoordinatorEndpointOption, responseTimeout: Duration = .seconds(5),
    _ body: (ClusterClient) async throws -> Result
) async throws -> Result {
    let client = try await ClusterClient(
        endpoint: option.endpoint, responseTimeout: responseTimeout,
        socketOptions: try option.socketOptions())
    let result: Swift.Result<Result, any Error>
    do {
        result = .success(try await body(client))
    } catch {
        result = .failure(error)
    }
    await client.close()
    return try result.get()
}
