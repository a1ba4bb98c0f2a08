#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A TCP port on a loopback address that listens and never answers, to prove that nothing connected to it:
/// the kernel completes a connection into the listen queue whether or not it is accepted, and
/// ``connections()`` accepts (without blocking) and counts what arrived. For "the denied origin never sees a
/// connection".
public final class ConnectionWitness: @unchecked Sendable {
    private let descriptor: Int32
    /// The port it listens on.
    public let port: Int
    /// The address it listens on.
    public let host: String
    private var accepted = 0

    /// Listens on `host` (an IPv4 address, 127.0.0.1 by default) at an ephemeral port.
    public init(host: String = "127.0.0.1") throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard descriptor >= 0 else { throw WitnessError("socket failed: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else {
            close(descriptor)
            throw WitnessError("\(host) is not an IPv4 address")
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(descriptor, 64) == 0 else {
            close(descriptor)
            throw WitnessError("cannot listen on \(host): errno \(errno)")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        self.descriptor = descriptor
        self.host = host
        self.port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { close(descriptor) }

    /// `http://HOST:PORT` followed by `path`.
    public func url(_ path: String) -> String { "http://\(host):\(port)\(path)" }

    /// How many connections arrived so far (each accepted and closed at once).
    public func connections() -> Int {
        while true {
            let connection = accept(descriptor, nil, nil)
            guard connection >= 0 else { break }
            close(connection)
            accepted += 1
        }
        return accepted
    }

    struct WitnessError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
