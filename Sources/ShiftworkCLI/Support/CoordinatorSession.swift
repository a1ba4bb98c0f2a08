import Cluster
import Messaging

/// Runs `body` with a client connected to the coordinator `option` names (with its CurveZMQ keys, if
/// given), and always closes the client and its ZeroMQ context afterwards, whatever `body` did.
func withCoordinator<Result: Sendable>(
    _ option: CoordinatorEndpointOption, responseTimeout: Duration = .seconds(5),
    _ body: (ClusterClient) async throws -> Result
) async throws -> Result {
    let options = try option.socketOptions()
    let context = try MessagingContext()
    let client: ClusterClient
    do {
        client = try await ClusterClient(endpoint: option.endpoint, context: context, responseTimeout: responseTimeout,
                                         socketOptions: options)
    } catch {
        await context.terminate()
        throw error
    }
    let result: Swift.Result<Result, any Error>
    do {
        result = .success(try await body(client))
    } catch {
        result = .failure(error)
    }
    await client.close()
    await context.terminate()
    return try result.get()
}
