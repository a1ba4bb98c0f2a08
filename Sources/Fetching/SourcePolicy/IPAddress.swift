#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An IPv4 or IPv6 address, as the bytes a connection goes to: what the ``SourcePolicy`` judges.
///
/// Parsed strictly from the usual text (``init(_:)``: `192.0.2.1`, `2001:db8::1`), or leniently from a URL's
/// host the way the resolver reads it (``init(urlHost:)``: `127.1`, `2130706433`, `0x7f.0.0.1`, `0177.0.0.1`,
/// `[::ffff:127.0.0.1]`), so that every spelling of an address is judged as the address it stands for.
public struct IPAddress: Sendable, Hashable, CustomStringConvertible {
    /// 4 bytes (IPv4) or 16 (IPv6), in network order.
    public let bytes: [UInt8]

    /// Whether this is an IPv4 address (4 bytes).
    public var isIPv4: Bool { bytes.count == 4 }

    /// An address of 4 or 16 `bytes` in network order; `nil` for any other count.
    public init?(bytes: [UInt8]) {
        guard bytes.count == 4 || bytes.count == 16 else { return nil }
        self.bytes = bytes
    }

    /// Parses an address in its usual text form: dotted-quad IPv4 (`192.0.2.1`, four decimal parts) or IPv6
    /// (`2001:db8::1`, `::ffff:192.0.2.1`, without brackets). `nil` for anything else.
    public init?(_ text: String) {
        if let bytes = Self.presentation(text, family: AF_INET, count: 4)
            ?? Self.presentation(text, family: AF_INET6, count: 16)
        {
            self.bytes = bytes
        } else {
            return nil
        }
    }

    /// Parses the host of a URL as the resolver reads an address: IPv6 in brackets (`[::1]`), or IPv4 in any
    /// of the forms `inet_aton` accepts: dotted or not, with one to four parts, each decimal, octal (`0177`)
    /// or hexadecimal (`0x7f`), so `127.1`, `2130706433` and `0x7f000001` are all 127.0.0.1. `nil` for a
    /// host name (which needs DNS).
    public init?(urlHost host: String) {
        if host.hasPrefix("["), host.hasSuffix("]") {
            var inner = String(host.dropFirst().dropLast())
            // A zone (`fe80::1%25eth0`) names an interface, not a different address.
            if let percent = inner.firstIndex(of: "%") { inner = String(inner[..<percent]) }
            guard let bytes = Self.presentation(inner, family: AF_INET6, count: 16) else { return nil }
            self.bytes = bytes
            return
        }
        guard !host.isEmpty,
            host.unicodeScalars.allSatisfy({
                ("0"..."9").contains($0) || ("a"..."f").contains($0)
                    || ("A"..."F").contains($0) || $0 == "." || $0 == "x" || $0 == "X"
            })
        else { return nil }
        // A trailing dot is the root of a name; the resolver reads `127.0.0.1.` as the address too.
        let text = host.hasSuffix(".") ? String(host.dropLast()) : host
        var address = in_addr()
        guard inet_aton(text, &address) != 0 else { return nil }
        self.bytes = withUnsafeBytes(of: address.s_addr) { Array($0) }
    }

    /// IPv4 as `a.b.c.d`, IPv6 in its shortest form (`::1`, `::ffff:127.0.0.1`).
    public var description: String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        let family = isIPv4 ? AF_INET : AF_INET6
        let text = bytes.withUnsafeBytes { raw in inet_ntop(family, raw.baseAddress, &buffer, socklen_t(buffer.count)) }
        guard text != nil else { return bytes.map(String.init).joined(separator: ".") }
        return String(cString: buffer)
    }

    /// The IPv4 address an IPv6 address stands for when it is an IPv4-mapped one (`::ffff:a.b.c.d`): the
    /// connection goes to that IPv4 address. `nil` otherwise (and for IPv4).
    public var mappedIPv4: IPAddress? {
        guard bytes.count == 16, bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF else {
            return nil
        }
        return IPAddress(bytes: Array(bytes[12..<16]))
    }

    /// The IPv4 address embedded in an IPv6 address that a translator or tunnel may forward to it: the
    /// deprecated IPv4-compatible form (`::a.b.c.d`, but not `::` and `::1`), NAT64's well-known prefix
    /// (`64:ff9b::a.b.c.d`) and 6to4 (`2002:AABB:CCDD::/48`). `nil` otherwise. (IPv4-mapped is ``mappedIPv4``.)
    public var embeddedIPv4: IPAddress? {
        guard bytes.count == 16 else { return nil }
        if bytes[0..<12].allSatisfy({ $0 == 0 }) {
            let last = bytes[12..<16]
            guard !(last[12...14].allSatisfy { $0 == 0 } && last[15] <= 1) else { return nil }
            return IPAddress(bytes: Array(last))
        }
        if bytes[0..<12] == [0x00, 0x64, 0xFF, 0x9B, 0, 0, 0, 0, 0, 0, 0, 0] {
            return IPAddress(bytes: Array(bytes[12..<16]))
        }
        if bytes[0] == 0x20, bytes[1] == 0x02 { return IPAddress(bytes: Array(bytes[2..<6])) }
        return nil
    }

    private static func presentation(_ text: String, family: Int32, count: Int) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: 16)
        let parsed = bytes.withUnsafeMutableBytes { inet_pton(family, text, $0.baseAddress) }
        return parsed == 1 ? Array(bytes.prefix(count)) : nil
    }
}
