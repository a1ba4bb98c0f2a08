/// A range of addresses in CIDR notation (`127.0.0.0/8`, `fe80::/10`, `192.0.2.7/32`): an address and how
/// many of its leading bits every member shares.
public struct IPNetwork: Sendable, Hashable, CustomStringConvertible {
    /// The first address of the range (the bits after the prefix are zero).
    public let address: IPAddress
    /// Leading bits that every member shares: 0...32 for IPv4, 0...128 for IPv6.
    public let prefixLength: Int

    /// The range of `prefixLength` leading bits of `address` (bits after the prefix are cleared).
    public init(_ address: IPAddress, prefixLength: Int) {
        let length = min(max(0, prefixLength), address.bytes.count * 8)
        var bytes = address.bytes
        for index in bytes.indices {
            let keep = min(8, max(0, length - index * 8))
            bytes[index] &= keep == 0 ? 0 : UInt8(truncatingIfNeeded: 0xFF << (8 - keep))
        }
        self.address = IPAddress(bytes: bytes) ?? address
        self.prefixLength = length
    }

    /// Parses `ADDRESS/BITS` (`10.0.0.0/8`, `fd00::/8`), or a single address (`192.0.2.7`: `/32`, `/128`).
    /// The address must be in its usual form (dotted-quad IPv4 or IPv6, no brackets).
    ///
    /// - Throws: ``SourcePolicyError`` naming the text, what is wrong and an example.
    public init(parsing text: String) throws(SourcePolicyError) {
        let trimmed = text.trimmingWhitespace
        let parts = trimmed.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let address = IPAddress(String(parts[0])) else {
            throw SourcePolicyError(
                "'\(trimmed)' is not a network: give an address range in CIDR notation, such as 127.0.0.0/8, 10.0.0.0/8 or fd00::/8"
            )
        }
        let maximum = address.bytes.count * 8
        var length = maximum
        if parts.count == 2 {
            guard let bits = Int(parts[1]), parts[1].allSatisfy(\.isASCII), (0...maximum).contains(bits) else {
                throw SourcePolicyError(
                    "'\(trimmed)' is not a network: the prefix length after '/' must be 0 to \(maximum) for an "
                        + (address.isIPv4 ? "IPv4" : "IPv6") + " address, such as "
                        + (address.isIPv4 ? "127.0.0.0/8" : "fe80::/10"))
            }
            length = bits
        }
        self.init(address, prefixLength: length)
    }

    /// Parses a comma-separated list of networks (`127.0.0.0/8,::1/128`); spaces around the commas and empty
    /// entries are ignored.
    ///
    /// - Throws: ``SourcePolicyError`` for the first entry that is not a network.
    public static func parseList(_ text: String) throws(SourcePolicyError) -> [IPNetwork] {
        var networks: [IPNetwork] = []
        for entry in text.split(separator: ",") where !String(entry).trimmingWhitespace.isEmpty {
            networks.append(try IPNetwork(parsing: String(entry)))
        }
        return networks
    }

    /// Whether `address` is in this range (an IPv4 address is never in an IPv6 range, nor the reverse).
    public func contains(_ address: IPAddress) -> Bool {
        guard address.bytes.count == self.address.bytes.count else { return false }
        var remaining = prefixLength
        for index in address.bytes.indices where remaining > 0 {
            let bits = min(8, remaining)
            let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - bits))
            if address.bytes[index] & mask != self.address.bytes[index] { return false }
            remaining -= bits
        }
        return true
    }

    /// `127.0.0.0/8`, `::1/128`.
    public var description: String { "\(address)/\(prefixLength)" }
}

/// A setting of the source policy that cannot be used: says what is wrong and gives an example.
public struct SourcePolicyError: Error, Sendable, Equatable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

extension String {
    var trimmingWhitespace: String {
        var text = Substring(self)
        while let first = text.first, first.isWhitespace { text = text.dropFirst() }
        while let last = text.last, last.isWhitespace { text = text.dropLast() }
        return String(text)
    }
}
