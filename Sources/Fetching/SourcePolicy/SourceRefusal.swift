/// Why a ``SourcePolicy`` refused an address: the address, the range that holds it and what that range is,
/// and, in ``message``, the option that allows it. Never a response body or a credential: it is decided
/// before any connection.
public struct SourceRefusal: Sendable, Equatable, CustomStringConvertible {
    /// Why the range is denied.
    public enum Reason: Sendable, Equatable {
        /// One of the ``SpecialNetwork`` ranges, by what it is ("loopback (this machine)").
        case special(String)
        /// A range of the operator's `--deny-source-networks`.
        case deniedByOperator
    }

    /// The address as the connection would have used it (`::ffff:127.0.0.1` stays so).
    public let address: IPAddress
    /// The denied range that holds it (its IPv4 form's, for a mapped or embedded address).
    public let network: IPNetwork
    public let reason: Reason

    public init(address: IPAddress, network: IPNetwork, reason: Reason) {
        self.address = address
        self.network = network
        self.reason = reason
    }

    /// The same refusal for `address` (an IPv6 form of the IPv4 address judged).
    func shown(as address: IPAddress) -> SourceRefusal {
        SourceRefusal(address: address, network: network, reason: reason)
    }

    /// A short name of the reason for counting refusals ("loopback", "link-local", "metadata", "denied").
    public var category: String {
        switch reason {
        case .deniedByOperator: return "denied by --deny-source-networks"
        case .special(let kind):
            if kind.hasPrefix("the cloud instance metadata") { return "metadata" }
            return String(kind.prefix { $0 != " " })
        }
    }

    /// "address 127.0.0.1 is loopback (this machine), in 127.0.0.0/8, which this worker does not fetch from; to
    /// allow it, start the worker with --allow-source-networks 127.0.0.1/32 (or the range; env
    /// SHIFTWORK_ALLOW_SOURCE_NETWORKS)".
    public var message: String {
        // The address the range holds: the IPv4 one that a mapped or embedding IPv6 address carries.
        let judged =
            network.address.isIPv4 && !address.isIPv4
            ? (address.mappedIPv4 ?? address.embeddedIPv4 ?? address) : address
        let single = IPNetwork(judged, prefixLength: 128)
        switch reason {
        case .special(let kind):
            return
                "address \(address) is \(kind), in \(network), which this worker does not fetch from (source policy); "
                + "to allow it, start the worker with --allow-source-networks \(single)\(single == network ? "" : " or \(network)") "
                + "(env SHIFTWORK_ALLOW_SOURCE_NETWORKS)"
        case .deniedByOperator:
            return
                "address \(address) is in \(network), denied by --deny-source-networks (source policy); to allow it, "
                + "start the worker with a narrower --allow-source-networks such as \(single) "
                + "(env SHIFTWORK_ALLOW_SOURCE_NETWORKS)"
        }
    }

    public var description: String { message }
}
