import ArgumentParser
import Cluster

/// `--coordinator ENDPOINT`, falling back to SHIFTWORK_COORDINATOR.
struct CoordinatorEndpointOption: ParsableArguments {
    @Option(name: .long, help: "The coordinator's endpoint (env SHIFTWORK_COORDINATOR; default \(ClusterDefaults.coordinatorEndpoint)).")
    var coordinator: String?

    /// The endpoint to connect to.
    var endpoint: String {
        Environment.resolve(coordinator, "COORDINATOR", default: ClusterDefaults.coordinatorEndpoint)
    }
}
