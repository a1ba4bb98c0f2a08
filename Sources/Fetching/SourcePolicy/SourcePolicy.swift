/// Which addresses a worker may connect to for a source: a download, a manifest, an `s3://` object and the
/// S3 endpoint, at the first request and at every redirect. A value with one decision function,
/// ``decision(for:)``, tested without sockets; ``HTTPDownloader`` asks it about the resolved address of every
/// connection libcurl is about to open (`CURLOPT_OPENSOCKETFUNCTION`), so a host name, any spelling of an
/// address and a redirect are all judged by the address the connection would really reach, and a denied
/// origin never sees a connection.
///
/// `shiftwork worker` starts ``restricted(allowing:denying:)``: the ``SpecialNetwork`` ranges (loopback,
/// link-local and the cloud metadata addresses, unspecified, multicast, broadcast) are denied, with the
/// operator's `--allow-source-networks` as exceptions and `--deny-source-networks` as more ranges denied.
/// `shiftwork run`, `tiltshift` and the embedded cluster fetch on the user's own behalf: ``unrestricted``.
///
/// How an address is judged:
/// 1. An IPv4-mapped IPv6 address (`::ffff:127.0.0.1`) is judged as the IPv4 address it carries.
/// 2. Of the operator's ranges (allowed and denied) that hold the address, the most specific decides (a tie:
///    denied), so `--deny-source-networks 10.0.0.0/8 --allow-source-networks 10.1.2.3/32` admits 10.1.2.3.
/// 3. Else a ``SpecialNetwork`` that holds it denies it (when the policy has them).
/// 4. Else it is allowed.
/// An IPv6 address that embeds an IPv4 one (IPv4-compatible, NAT64 `64:ff9b::/96`, 6to4 `2002::/16`) must
/// pass both as itself and as the IPv4 address it embeds.
public struct SourcePolicy: Sendable, Equatable {
    /// The operator's exceptions: addresses in them are allowed even in a special range.
    public var allowed: [IPNetwork]
    /// The operator's extra ranges denied (private networks, for example).
    public var denied: [IPNetwork]
    /// Whether the ``SpecialNetwork`` ranges are denied (unless allowed).
    public var deniesSpecialNetworks: Bool

    /// Every address allowed (`shiftwork run`, the embedded cluster: everything on the user's own machine).
    public static let unrestricted = SourcePolicy(allowed: [], denied: [], deniesSpecialNetworks: false)

    /// A worker's policy: the special ranges denied, `allowing` admitted, `denying` denied too.
    public static func restricted(allowing: [IPNetwork] = [], denying: [IPNetwork] = []) -> SourcePolicy {
        SourcePolicy(allowed: allowing, denied: denying, deniesSpecialNetworks: true)
    }

    /// Creates a policy.
    public init(allowed: [IPNetwork], denied: [IPNetwork], deniesSpecialNetworks: Bool) {
        self.allowed = allowed
        self.denied = denied
        self.deniesSpecialNetworks = deniesSpecialNetworks
    }

    /// One line for a worker's start-up log: what is refused and what is allowed.
    public var summary: String {
        if allowsEverything { return "every address allowed" }
        var parts: [String] = []
        if deniesSpecialNetworks {
            parts.append(
                "refusing loopback, link-local (the cloud metadata service), unspecified, multicast and broadcast addresses"
            )
        }
        if !denied.isEmpty { parts.append("refusing " + denied.map(\.description).joined(separator: ",")) }
        if !allowed.isEmpty { parts.append("allowing " + allowed.map(\.description).joined(separator: ",")) }
        return parts.joined(separator: "; ")
    }

    /// Whether every address is allowed (no check is needed at all).
    public var allowsEverything: Bool { !deniesSpecialNetworks && denied.isEmpty }

    /// Whether a connection to `address` may be opened; a refusal says why.
    public func decision(for address: IPAddress) -> SourceDecision {
        if let mapped = address.mappedIPv4 {
            if case .denied(let refusal) = judge(mapped) { return .denied(refusal.shown(as: address)) }
            return .allowed
        }
        if case .denied(let refusal) = judge(address) { return .denied(refusal) }
        if let embedded = address.embeddedIPv4, case .denied(let refusal) = judge(embedded) {
            return .denied(refusal.shown(as: address))
        }
        return .allowed
    }

    /// The decision for a URL's host when it is an address in any spelling (``IPAddress/init(urlHost:)``);
    /// `nil` for a host name, which is judged once resolved.
    public func decision(forHost host: String) -> SourceDecision? {
        IPAddress(urlHost: host).map(decision(for:))
    }

    private func judge(_ address: IPAddress) -> SourceDecision {
        let allow = allowed.filter { $0.contains(address) }.map(\.prefixLength).max()
        let deny = denied.filter { $0.contains(address) }.max { $0.prefixLength < $1.prefixLength }
        if let deny, deny.prefixLength >= (allow ?? -1) {
            return .denied(SourceRefusal(address: address, network: deny, reason: .deniedByOperator))
        }
        if allow != nil { return .allowed }
        if deniesSpecialNetworks, let special = SpecialNetwork.containing(address) {
            return .denied(SourceRefusal(address: address, network: special.network, reason: .special(special.kind)))
        }
        return .allowed
    }
}

/// What a ``SourcePolicy`` says about one address.
public enum SourceDecision: Sendable, Equatable {
    case allowed
    case denied(SourceRefusal)

    /// The refusal, when denied.
    public var refusal: SourceRefusal? {
        if case .denied(let refusal) = self { return refusal }
        return nil
    }
}
