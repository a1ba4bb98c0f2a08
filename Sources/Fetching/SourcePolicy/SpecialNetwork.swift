/// The address ranges a worker does not fetch from unless told to (``SourcePolicy/restricted(allowing:denying:)``):
/// each is this machine itself, its local link (where clouds put their instance metadata service, with the
/// instance's credentials), or not a single host at all.
public struct SpecialNetwork: Sendable, Hashable {
    /// The range.
    public let network: IPNetwork
    /// What the range is, in a refusal's message: "loopback", "link-local (the cloud metadata service)".
    public let kind: String

    /// Every range denied by default, the most specific first (a metadata address before its link-local
    /// range, so that a refusal names the more telling one).
    public static let all: [SpecialNetwork] = [
        special("169.254.169.254/32", "the cloud instance metadata service (link-local)"),
        special("fd00:ec2::254/128", "the cloud instance metadata service (AWS's IPv6 address)"),
        special("0.0.0.0/8", "unspecified ('this host'; a connection to it reaches this machine)"),
        special("127.0.0.0/8", "loopback (this machine)"),
        special("169.254.0.0/16", "link-local"),
        special("224.0.0.0/4", "multicast"),
        special("255.255.255.255/32", "broadcast"),
        special("::/128", "unspecified (a connection to it reaches this machine)"),
        special("::1/128", "loopback (this machine)"),
        special("fe80::/10", "link-local"),
        special("ff00::/8", "multicast"),
    ]

    /// The first range of ``all`` that holds `address`.
    public static func containing(_ address: IPAddress) -> SpecialNetwork? {
        all.first { $0.network.contains(address) }
    }

    private static func special(_ cidr: String, _ kind: String) -> SpecialNetwork {
        // The table is constant text, parsed once; a typo would show in SourcePolicyTests at once.
        let network =
            (try? IPNetwork(parsing: cidr)) ?? IPNetwork(IPAddress(bytes: [255, 255, 255, 255])!, prefixLength: 32)
        return SpecialNetwork(network: network, kind: kind)
    }
}
