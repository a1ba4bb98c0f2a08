import ArgumentParser
import Cluster
import Messaging

/// `--coordinator ENDPOINT` (falling back to SHIFTWORK_COORDINATOR) and the CurveZMQ keys to reach it with.
struct CoordinatorEndpointOption: ParsableArguments {
    @Option(
        name: .long,
        help:
            "The coordinator's endpoint (env SHIFTWORK_COORDINATOR; default \(ClusterDefaults.coordinatorEndpoint), except for a worker with SHIFTWORK_REQUIRE_COORDINATOR=1, as in the container image, which must be given one)."
    )
    var coordinator: String?

    @OptionGroup var keys: PeerKeyOptions

    /// The endpoint to connect to.
    var endpoint: String {
        Environment.resolve(coordinator, "COORDINATOR", default: ClusterDefaults.coordinatorEndpoint)
    }

    /// The endpoint to connect to, given explicitly (option or `SHIFTWORK_COORDINATOR`) when
    /// `SHIFTWORK_REQUIRE_COORDINATOR` is set: the container image sets it, since there the default
    /// (`127.0.0.1`) is the container itself, and a worker would wait for it for ever.
    ///
    /// - Throws: `CommandError` naming the option and the variable when none is given but one is required.
    func requiredEndpoint() throws -> String {
        if Environment.flag(false, "REQUIRE_COORDINATOR"), Environment.resolve(coordinator, "COORDINATOR") == nil {
            throw CommandError(
                "no coordinator address: set SHIFTWORK_COORDINATOR (or --coordinator), e.g. tcp://coordinator:5570. "
                    + "SHIFTWORK_REQUIRE_COORDINATOR is set (the container image sets it): the default \(ClusterDefaults.coordinatorEndpoint) "
                    + "would be this container itself")
        }
        return endpoint
    }

    /// Socket options with the CurveZMQ keys, if any were given.
    func socketOptions() throws -> SocketOptions {
        var options = SocketOptions()
        options.curve = try keys.security()
        return options
    }
}
