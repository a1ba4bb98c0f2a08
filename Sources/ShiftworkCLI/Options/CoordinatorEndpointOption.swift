import ArgumentParser
import Cluster
import Foundation
import Messaging

/// `--coordinator ENDPOINT[,ENDPOINT…]` (falling back to SHIFTWORK_COORDINATOR) and the CurveZMQ keys to
/// reach it with. Several endpoints name a pair (docs/failover.md): the peer turns to the next on silence.
struct CoordinatorEndpointOption: ParsableArguments {
    @Option(
        name: .long,
        help:
            "The coordinator's endpoint, or a comma-separated list (a pair: tried in order, turning to the next when one is silent) (env SHIFTWORK_COORDINATOR; default \(ClusterDefaults.coordinatorEndpoint), except for a worker with SHIFTWORK_REQUIRE_COORDINATOR=1, as in the container image, which must be given one)."
    )
    var coordinator: String?

    @OptionGroup var keys: PeerKeyOptions

    /// The endpoint (or list of endpoints) given, or the default.
    var endpoint: String {
        Environment.resolve(coordinator, "COORDINATOR", default: ClusterDefaults.coordinatorEndpoint)
    }

    /// The endpoints to connect to, in order.
    ///
    /// - Throws: `CommandError` naming the empty entry or the malformed endpoint, and where it came from.
    func endpoints() throws -> CoordinatorEndpoints {
        let given = endpoint
        // One endpoint is taken as before (ZeroMQ checks it when it connects); a list is checked here.
        guard given.contains(",") else {
            return CoordinatorEndpoints(single: given.trimmingCharacters(in: .whitespaces))
        }
        do {
            return try CoordinatorEndpoints(parsing: given)
        } catch let error as CoordinatorEndpointsError {
            let source = coordinator == nil ? "SHIFTWORK_COORDINATOR" : "--coordinator"
            throw CommandError("\(source): \(error)")
        }
    }

    /// The endpoint to connect to, given explicitly (option or `SHIFTWORK_COORDINATOR`) when
    /// `SHIFTWORK_REQUIRE_COORDINATOR` is set: the container image sets it, since there the default
    /// (`127.0.0.1`) is the container itself, and a worker would wait for it for ever.
    ///
    /// - Throws: `CommandError` naming the option and the variable when none is given but one is required.
    func requiredEndpoints() throws -> CoordinatorEndpoints {
        if Environment.flag(false, "REQUIRE_COORDINATOR"), Environment.resolve(coordinator, "COORDINATOR") == nil {
            throw CommandError(
                "no coordinator address: set SHIFTWORK_COORDINATOR (or --coordinator), e.g. tcp://coordinator:5570. "
                    + "SHIFTWORK_REQUIRE_COORDINATOR is set (the container image sets it): the default \(ClusterDefaults.coordinatorEndpoint) "
                    + "would be this container itself")
        }
        return try endpoints()
    }

    /// Socket options with the CurveZMQ keys, if any were given.
    func socketOptions() throws -> SocketOptions {
        var options = SocketOptions()
        options.curve = try keys.security()
        return options
    }
}
