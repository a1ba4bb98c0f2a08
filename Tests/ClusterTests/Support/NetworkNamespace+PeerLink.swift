import Foundation

/// A veth link between two namespaces and nothing else: two "hosts" that reach each other over it, and the
/// root namespace over their own links, so that a test cuts what is between those two alone (a coordinator
/// pair's own link, while workers and clients still reach both).
extension NetworkNamespace {
    /// A veth pair with one end in each of two namespaces, addressed from a /30 of 10.214.0.0/16 (private to
    /// the two namespaces: the root namespace never sees it).
    struct PeerLink {
        /// The interface in the first namespace, and its address.
        let interface: String
        let address: String
        /// The interface in the second namespace, and its address.
        let peerInterface: String
        let peerAddress: String
    }

    /// Makes a veth pair between this namespace and `other`, up and addressed. Deleted with either namespace
    /// (`destroy()`).
    func peerLink(to other: NetworkNamespace) async throws -> PeerLink {
        let tag = String(UUID().uuidString.lowercased().filter(\.isHexDigit).prefix(6))
        let block = Int.random(in: 0..<(256 * 64))
        let third = block / 64
        let network = (block % 64) * 4
        let link = PeerLink(
            interface: "sw\(tag)pa", address: "10.214.\(third).\(network + 1)",
            peerInterface: "sw\(tag)pb", peerAddress: "10.214.\(third).\(network + 2)")
        try await run([
            "-n", name, "link", "add", link.interface, "type", "veth", "peer", "name", link.peerInterface, "netns",
            other.name,
        ])
        try await run(["-n", name, "address", "add", "\(link.address)/30", "dev", link.interface])
        try await run(["-n", other.name, "address", "add", "\(link.peerAddress)/30", "dev", link.peerInterface])
        try await run(["-n", name, "link", "set", link.interface, "up"])
        try await run(["-n", other.name, "link", "set", link.peerInterface, "up"])
        return link
    }

    /// Brings this namespace's end of `link` down (the two are cut apart; each keeps its other links) or up.
    func setPeerLink(_ link: PeerLink, up: Bool) async throws {
        try await run(["-n", name, "link", "set", link.interface, up ? "up" : "down"])
    }
}
