#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A TCP socket bound to `host:port` and listening, for an HTTP server to accept on.
struct ListeningSocket {
    /// The descriptor (the server that takes it closes it).
    let descriptor: Int32
    /// The port bound (a port of 0 resolved).
    let port: Int

    /// The host that means every interface of both families, as ZeroMQ's `tcp://*:PORT`.
    static let everyInterface = "*"

    /// Binds the first address `host` resolves to (an IP address or a name) on `port` (0: any free port).
    /// `*` binds every interface: IPv6's `::` accepting IPv4 too (`IPV6_V6ONLY` off, whatever the
    /// system's default), or IPv4's `0.0.0.0` alone where the kernel has no IPv6.
    ///
    /// - Throws: ``HTTPEndpointError/cannotListen(host:port:reason:)`` when nothing could be bound.
    static func make(host: String, port: Int, backlog: Int32 = 256) throws -> ListeningSocket {
        guard (0...65535).contains(port) else {
            throw HTTPEndpointError.cannotListen(host: host, port: port, reason: "the port must be 0…65535")
        }
        if host == everyInterface {
            do {
                return try bindFirstAddress(host: "::", port: port, backlog: backlog)
            } catch {
                return try bindFirstAddress(host: "0.0.0.0", port: port, backlog: backlog)
            }
        }
        return try bindFirstAddress(host: host, port: port, backlog: backlog)
    }

    private static func bindFirstAddress(host: String, port: Int, backlog: Int32) throws -> ListeningSocket {
        var hints = addrinfo()
        hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
        hints.ai_socktype = SOCK_STREAM
        #endif
        var list: UnsafeMutablePointer<addrinfo>?
        let resolved = getaddrinfo(host, String(port), &hints, &list)
        guard resolved == 0, let first = list else {
            throw HTTPEndpointError.cannotListen(
                host: host, port: port, reason: String(cString: gai_strerror(resolved)))
        }
        defer { freeaddrinfo(first) }
        var reason = "no address"
        var next: UnsafeMutablePointer<addrinfo>? = first
        while let address = next {
            next = address.pointee.ai_next
            let descriptor = socket(address.pointee.ai_family, address.pointee.ai_socktype, address.pointee.ai_protocol)
            guard descriptor >= 0 else {
                reason = String(cString: strerror(errno))
                continue
            }
            var one: Int32 = 1
            setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
            if address.pointee.ai_family == AF_INET6 {
                // `::` serves IPv4 clients too (as `::ffff:a.b.c.d`); a specific IPv6 address is unaffected.
                var zero: Int32 = 0
                setsockopt(descriptor, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &zero, socklen_t(MemoryLayout<Int32>.size))
            }
            guard bind(descriptor, address.pointee.ai_addr, address.pointee.ai_addrlen) == 0,
                listen(descriptor, backlog) == 0
            else {
                reason = String(cString: strerror(errno))
                close(descriptor)
                continue
            }
            return ListeningSocket(descriptor: descriptor, port: boundPort(descriptor) ?? port)
        }
        throw HTTPEndpointError.cannotListen(host: host, port: port, reason: reason)
    }

    private static func boundPort(_ descriptor: Int32) -> Int? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let found = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        guard found == 0 else { return nil }
        let family = Int32(storage.ss_family)
        return withUnsafePointer(to: &storage) { pointer -> Int? in
            switch family {
            case AF_INET:
                return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                    Int(UInt16(bigEndian: $0.pointee.sin_port))
                }
            case AF_INET6:
                return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                    Int(UInt16(bigEndian: $0.pointee.sin6_port))
                }
            default:
                return nil
            }
        }
    }
}
