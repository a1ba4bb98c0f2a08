import ArgumentParser
import Cluster
import Messaging

/// `--coordinator ENDPOINT` (falling back to SHIFTWORK_COORDINATOR) and the CurveZMQ keys to reach it with.
struct CoordinatorEndpointOption: ParsableArguments {
    @Option(name: .long, help: "The coordinator's endpoint (env SHIFTWORK_COORDINATOR; default \(ClusterDefaults.coordinatorEndpoint)).")
    var coordinator: String?

    @OptionGroup var keys: PeerKeyOptions

    /// The endpoint to connect to.
    var endpoint: String {
        Environment.resolve(coordinator, "COORDINATOR", default: ClusterDefaults.coordinatorEndpoint)
    }

    /// Socket options with the CurveZMQ keys, if any were given.
    func socketOptions() throws -> SocketOptions {
        var options = SocketOptions()
        options.curve = try keys.security()
        return options
    }
}
