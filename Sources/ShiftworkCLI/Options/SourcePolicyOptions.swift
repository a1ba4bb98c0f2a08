import ArgumentParser
import Cluster
import Fetching

/// `--allow-source-networks` and `--deny-source-networks`: the worker's source policy (which addresses its
/// downloads, manifests and S3 requests may connect to). Each falls back to a `SHIFTWORK_*` variable.
struct SourcePolicyOptions: ParsableArguments {
    @Option(
        help:
            "Networks a worker may fetch from although they are denied by default (loopback, link-local and the cloud metadata service, unspecified, multicast, broadcast), in CIDR notation, comma-separated, e.g. 127.0.0.0/8,::1/128 for a server on this machine (env SHIFTWORK_ALLOW_SOURCE_NETWORKS; default: none)."
    )
    var allowSourceNetworks: String?

    @Option(
        help:
            "More networks a worker refuses to fetch from, in CIDR notation, comma-separated, e.g. 10.0.0.0/8,172.16.0.0/12,192.168.0.0/16,fc00::/7 for the private ranges (env SHIFTWORK_DENY_SOURCE_NETWORKS; default: none). The most specific of these and --allow-source-networks decides."
    )
    var denySourceNetworks: String?

    /// The worker's policy: the special ranges denied, with these exceptions and additions.
    ///
    /// - Throws: `CommandError` naming the option, the value that is not a network and an example.
    func policy() throws -> SourcePolicy {
        .restricted(
            allowing: try networks(allowSourceNetworks, "ALLOW_SOURCE_NETWORKS", option: "--allow-source-networks"),
            denying: try networks(denySourceNetworks, "DENY_SOURCE_NETWORKS", option: "--deny-source-networks"))
    }

    private func networks(_ option: String?, _ name: String, option flag: String) throws -> [IPNetwork] {
        guard let text = Environment.resolve(option, name) else { return [] }
        do {
            return try IPNetwork.parseList(text)
        } catch {
            let source = option != nil ? flag : "SHIFTWORK_\(name)"
            throw CommandError(
                "\(source) \(PrintableText.escape(text)): \(error.description) (for example \(flag) 127.0.0.0/8,::1/128)"
            )
        }
    }
}
