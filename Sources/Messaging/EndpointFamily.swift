import Glibc

/// Which address families a ZeroMQ endpoint needs: whether its socket must have IPv6 on (`ZMQ_IPV6`).
///
/// With IPv6 on, libzmq resolves every TCP address as IPv6, IPv4 ones included, which become IPv4-mapped
/// (`tcp://127.0.0.1:*` binds and reports `tcp://[::ffff:127.0.0.1]:PORT`, and peers show as
/// `::ffff:10.0.0.5`). So it is on only where an endpoint needs it, and an endpoint given as an IPv4
/// address behaves exactly as it always did.
public enum EndpointFamily {
    /// Whether a socket with these endpoints needs IPv6: any of them is a TCP endpoint whose host is an
    /// IPv6 address in brackets (`tcp://[::1]:5570`), the wildcard `*` (both families: dual stack), or a
    /// name (`tcp://coordinator:5570`, which may resolve to an IPv6 address; libzmq then prefers IPv6 and
    /// maps IPv4 results). IPv4 addresses (`tcp://0.0.0.0:5570`, `tcp://10.0.0.5:5570`) and other
    /// transports (`inproc://`, `ipc://`) do not.
    public static func needsIPv6(_ endpoints: [String]) -> Bool {
        endpoints.contains(where: needsIPv6)
    }

    /// Whether one endpoint needs IPv6 (see ``needsIPv6(_:)``).
    public static func needsIPv6(_ endpoint: String) -> Bool {
        guard let host = tcpHost(endpoint) else { return false }
        if host.hasPrefix("[") || host == "*" { return true }
        var address = in_addr()
        return inet_pton(AF_INET, host, &address) != 1
    }

    /// The host of a `tcp://` endpoint (`tcp://HOST:PORT`, or `tcp://SOURCE;HOST:PORT`, where the host
    /// is the one after the `;`); `nil` for other transports.
    static func tcpHost(_ endpoint: String) -> String? {
        guard endpoint.lowercased().hasPrefix("tcp://") else { return nil }
        let address = endpoint.dropFirst("tcp://".count).split(separator: ";").last ?? ""
        guard let colon = address.lastIndex(of: ":") else { return String(address) }
        return String(address[..<colon])
    }
}
