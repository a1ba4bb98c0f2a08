import Foundation

/// Maps what a service sees inside its container onto this machine: every service becomes 127.0.0.1,
/// and every container port a free loopback port (the same one for the service's published port, so a
/// client on "the host" reaches it there).
struct LoopbackNetwork {
    let serviceNames: Set<String>
    private(set) var ports: [String: Int] = [:]  // "service:containerPort" -> local port

    init(serviceNames: some Sequence<String>) {
        self.serviceNames = Set(serviceNames)
    }

    /// The local port standing for `containerPort` of `service`.
    mutating func port(of service: String, containerPort: Int) throws -> Int {
        let key = "\(service):\(containerPort)"
        if let port = ports[key] { return port }
        let port = try freeLoopbackPort()
        ports[key] = port
        return port
    }

    /// Rewrites every `tcp://HOST:PORT` in `text`, as seen from inside `service`'s container:
    /// a service name means that service, and `0.0.0.0`, `*`, `127.0.0.1` or `localhost` the service itself.
    mutating func rewrite(_ text: String, inside service: String) throws -> String {
        let pattern = try Regex(#"tcp://([A-Za-z0-9_.*\-]+):([0-9]+)"#)
        var result = ""
        var rest = Substring(text)
        while let match = rest.firstMatch(of: pattern) {
            result += rest[..<match.range.lowerBound]
            let host = String(match.output[1].substring ?? "")
            let containerPort = Int(match.output[2].substring ?? "") ?? 0
            let owner: String
            if serviceNames.contains(host) {
                owner = host
            } else if ["0.0.0.0", "*", "127.0.0.1", "localhost"].contains(host) {
                owner = service
            } else {
                throw DeploymentTestError(
                    "'\(text)' in service '\(service)' names host '\(host)', which is neither a service of compose.yaml nor a local address"
                )
            }
            result += "tcp://127.0.0.1:\(try port(of: owner, containerPort: containerPort))"
            rest = rest[match.range.upperBound...]
        }
        return result + rest
    }
}
