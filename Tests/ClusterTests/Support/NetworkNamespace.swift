import Foundation

/// A network namespace of its own, joined to the root namespace by veth links, so that a test can run
/// a process on another "host" and cut it off the network (`ip link set … down`) while it keeps
/// running.
///
/// Each link is a veth pair with addresses from a private /30 in 10.213.0.0/16 that no interface of
/// the root namespace uses: `.1` on the host side, `.2` in the namespace; and IPv6 addresses from a
/// random /64 of fd00:5713::/32 (`::1` and `::2`, without duplicate address detection, so usable at
/// once). Names are unique per instance. `destroy()` kills whatever still runs inside, deletes the namespace and the links, and
/// must be called in the test's teardown whatever happened; every `ip` command has a timeout.
///
/// Needs root and iproute2; `create(links:)` throws `NetworkNamespace.Unavailable` otherwise, which a
/// test turns into `XCTSkip`.
final class NetworkNamespace: @unchecked Sendable {
    /// A veth pair between the root namespace and the namespace.
    struct Link {
        /// The interface in the root namespace.
        let hostInterface: String
        /// Its peer, in the namespace.
        let namespaceInterface: String
        /// The host side's address (the /30's `.1`).
        let hostAddress: String
        /// The namespace side's address (the /30's `.2`).
        let namespaceAddress: String
        /// The host side's IPv6 address, in a /64 of its own of the ULA range fd00::/8 (`…::1`).
        let hostAddress6: String
        /// The namespace side's IPv6 address (`…::2`).
        let namespaceAddress6: String
    }

    /// Why network namespaces cannot be used here (a reason to skip, not a failure).
    struct Unavailable: Error, CustomStringConvertible {
        let description: String
    }

    /// A command of `ip` that failed or hung.
    struct CommandFailed: Error, CustomStringConvertible {
        let description: String
    }

    /// The namespace's name (`ip netns list`).
    let name: String
    /// The links, in the order they were made.
    private(set) var links: [Link] = []
    /// The `ip` executable.
    let ip: URL
    private var destroyed = false
    /// `iptables`, and the rules `impair` added in the root namespace (those inside go with it).
    private var iptables: URL?
    private var hostRules: [[String]] = []
    /// The `packet-delay.py` processes of an emulated impairment.
    private var delayers: [Process] = []
    /// `/etc/netns/NAME`, when `useNameserver` made it.
    private var configurationDirectory: URL?
    /// The `tc` executable (iproute2), next to `ip`.
    private var tc: URL { ip.deletingLastPathComponent().appendingPathComponent("tc") }

    private init(name: String, ip: URL) {
        self.name = name
        self.ip = ip
    }

    /// Creates a namespace with its loopback up and `links` veth links to the root namespace, each up
    /// and addressed.
    ///
    /// - Throws: `Unavailable` when this process is not root, `ip` is missing, or the kernel or the
    ///   container refuses (e.g. an unprivileged container); `CommandFailed` when a later step fails.
    ///   Whatever was made is deleted before throwing.
    static func create(links: Int = 1) async throws -> NetworkNamespace {
        guard geteuid() == 0 else {
            throw Unavailable(description: "network namespaces need root (this test runs as uid \(geteuid()))")
        }
        guard
            let ip = ["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"]
                .map(URL.init(fileURLWithPath:))
                .first(where: { FileManager.default.isExecutableFile(atPath: $0.path) })
        else {
            throw Unavailable(description: "`ip` (iproute2) is not installed: run scripts/setup")
        }
        let tag = String(UUID().uuidString.lowercased().filter(\.isHexDigit).prefix(6))
        let namespace = NetworkNamespace(name: "shiftwork-test-\(tag)", ip: ip)
        do {
            try await namespace.run(["netns", "add", namespace.name])
        } catch {
            throw Unavailable(description: "`ip netns add` failed (an unprivileged container?): \(error)")
        }
        do {
            // `ip netns exec` needs to mount /sys in a namespace of its own: check that it can.
            do {
                try await namespace.run(["netns", "exec", namespace.name, ip.path, "link", "set", "lo", "up"])
            } catch {
                throw Unavailable(description: "`ip netns exec` failed (an unprivileged container?): \(error)")
            }
            for index in 0..<links {
                try await namespace.addLink(tag: tag, index: index)
            }
            return namespace
        } catch {
            await namespace.destroy()
            throw error
        }
    }

    /// `ip netns exec NAME` + `command`: the executable and arguments that run `command` inside.
    func exec(_ command: [String]) -> (executable: URL, arguments: [String]) {
        (ip, ["netns", "exec", name] + command)
    }

    /// Brings the host side of `link` down (the namespace is cut off that link) or up again.
    func setLink(_ link: Link, up: Bool) async throws {
        try await run(["link", "set", link.hostInterface, up ? "up" : "down"])
    }

    /// Makes name lookups inside the namespace ask the DNS server at `nameserver` (an address the
    /// namespace reaches over a link), with glibc's default timeouts written out (5 s per query, 2
    /// attempts): `/etc/netns/NAME/resolv.conf`, which `ip netns exec` mounts over `/etc/resolv.conf`
    /// for the processes it starts. `/etc/hosts` stays the host's. Removed by `destroy()`.
    func useNameserver(_ nameserver: String) throws {
        let directory = URL(fileURLWithPath: "/etc/netns/\(name)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        configurationDirectory = directory
        try Data("nameserver \(nameserver)\noptions timeout:5 attempts:2\n".utf8)
            .write(to: directory.appendingPathComponent("resolv.conf"))
    }

    /// How `impair` made a link lossy and slow.
    enum Impairment: String {
        /// `tc qdisc … netem delay … loss …` on both ends.
        case netem
        /// The kernel has no sch_netem: each end's outgoing packets go through an iptables `statistic`
        /// rule that drops `lossPercent` of them, then an NFQUEUE that `packet-delay.py` releases after
        /// `delay`. The same losses and latency, but the delay is a user-space process's, so it grows
        /// with the machine's load.
        case emulated
    }

    /// Makes `link` a link as real networks are: `delay` more latency each way and `lossPercent` of the
    /// packets lost, on both of its ends: `tc qdisc add dev … root netem delay … loss …`, or, on a kernel
    /// without netem, the same with iptables and NFQUEUE (`Impairment.emulated`). Segmentation offloads
    /// are limited to one segment per packet on both ends (`gso_max_segs 1`), so that a loss drops one
    /// packet, as on a wire, not a 64 KiB burst. Undone by `destroy()`.
    ///
    /// - Throws: `Unavailable` when neither netem nor iptables' NFQUEUE can be used, a reason to skip.
    @discardableResult
    func impair(_ link: Link, delay: Duration, lossPercent: Double) async throws -> Impairment {
        let milliseconds = Int(delay.components.seconds * 1000 + delay.components.attoseconds / 1_000_000_000_000_000)
        try await run(["link", "set", "dev", link.hostInterface, "gso_max_segs", "1"])
        try await run(["-n", name, "link", "set", "dev", link.namespaceInterface, "gso_max_segs", "1"])
        let netem = ["root", "netem", "delay", "\(milliseconds)ms", "loss", "\(lossPercent)%"]
        if (try? await run(["qdisc", "add", "dev", link.hostInterface] + netem, tool: tc)) != nil {
            try await run(["-n", name, "qdisc", "add", "dev", link.namespaceInterface] + netem, tool: tc)
            return .netem
        }
        guard
            let iptables = ["/usr/sbin/iptables", "/sbin/iptables"].first(
                where: FileManager.default.isExecutableFile(atPath:)),
            let delayer = Bundle.module.url(forResource: "packet-delay", withExtension: "py")
        else {
            throw Unavailable(
                description: "no netem in this kernel, and no iptables (or packet-delay.py) to emulate it")
        }
        let queue = String(Int.random(in: 10_000...60_000))
        self.iptables = URL(fileURLWithPath: iptables)  // before the first rule: `destroy()` removes what was added
        for (interface, inside) in [(link.hostInterface, false), (link.namespaceInterface, true)] {
            let rules = [
                [
                    "-o", interface, "-m", "statistic", "--mode", "random", "--probability", "\(lossPercent / 100)",
                    "-j", "DROP",
                ],
                ["-o", interface, "-j", "NFQUEUE", "--queue-num", queue, "--queue-bypass"],
            ]
            // The delay first, so that no packet is queued before it is released.
            let delayerCommand = ["/usr/bin/python3", delayer.path, queue, String(milliseconds)]
            let process = Process()
            process.executableURL = inside ? ip : URL(fileURLWithPath: delayerCommand[0])
            process.arguments = inside ? ["netns", "exec", name] + delayerCommand : Array(delayerCommand.dropFirst())
            // Its output goes to a file, polled (never a blocking read on the test's pool thread) for the
            // line that says the queue is bound, for at most 10 s.
            let log = FileManager.default.temporaryDirectory.appendingPathComponent(
                "shiftwork-delay-\(UUID().uuidString)")
            guard FileManager.default.createFile(atPath: log.path, contents: nil) else {
                throw CommandFailed(description: "cannot create \(log.path)")
            }
            defer { try? FileManager.default.removeItem(at: log) }
            let output = try FileHandle(forWritingTo: log)
            defer { try? output.close() }
            process.standardOutput = output
            process.standardError = output
            try process.run()
            delayers.append(process)
            let deadline = ContinuousClock.now + .seconds(10)
            var text = ""
            while !text.contains("packet delay on queue"), process.isRunning, ContinuousClock.now < deadline {
                try? await Task.sleep(for: .milliseconds(20))
                text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            }
            guard text.contains("packet delay on queue") else {
                throw Unavailable(
                    description: "no netem in this kernel, and packet-delay.py could not bind an NFQUEUE: \(text)")
            }
            for rule in rules {
                if inside {
                    try await run(["netns", "exec", name, iptables, "-A", "OUTPUT"] + rule)
                } else {
                    try await run(["-A", "OUTPUT"] + rule, tool: URL(fileURLWithPath: iptables))
                    hostRules.append(rule)
                }
            }
        }
        return .emulated
    }

    /// Kills every process still inside the namespace (all were started by this test), then deletes the
    /// namespace and its links. Idempotent; never throws, never hangs.
    func destroy() async {
        guard !destroyed else { return }
        destroyed = true
        if let configurationDirectory { try? FileManager.default.removeItem(at: configurationDirectory) }
        if let iptables {
            for rule in hostRules { _ = try? await run(["-D", "OUTPUT"] + rule, tool: iptables) }
        }
        for delayer in delayers where delayer.isRunning {
            kill(delayer.processIdentifier, SIGKILL)
            delayer.waitUntilExit()
        }
        if let pids = try? await run(["netns", "pids", name]) {
            for pid in pids.split(whereSeparator: \.isWhitespace).compactMap({ Int32($0) }) where pid > 1 {
                kill(pid, SIGKILL)
            }
        }
        _ = try? await run(["netns", "delete", name])
        // Deleting the namespace deletes the veth pairs; make sure of it for the host sides.
        for link in links {
            _ = try? await run(["link", "delete", link.hostInterface])
        }
    }

    // MARK: Making links

    private func addLink(tag: String, index: Int) async throws {
        let subnet = try await freeSubnet()
        // A random /64 of fd00:5713::/32: two words of 16 bits make a collision with another test's negligible.
        let prefix6 =
            "fd00:5713:\(String(UInt16.random(in: 1...UInt16.max), radix: 16)):\(String(UInt16.random(in: 0...UInt16.max), radix: 16))"
        let link = Link(
            hostInterface: "sw\(tag)h\(index)", namespaceInterface: "sw\(tag)n\(index)",
            hostAddress: "10.213.\(subnet.third).\(subnet.network + 1)",
            namespaceAddress: "10.213.\(subnet.third).\(subnet.network + 2)",
            hostAddress6: "\(prefix6)::1", namespaceAddress6: "\(prefix6)::2")
        try await run([
            "link", "add", link.hostInterface, "type", "veth", "peer", "name", link.namespaceInterface,
            "netns", name,
        ])
        links.append(link)
        try await run(["address", "add", "\(link.hostAddress)/30", "dev", link.hostInterface])
        try await run(["address", "add", "\(link.hostAddress6)/64", "dev", link.hostInterface, "nodad"])
        try await run(["link", "set", link.hostInterface, "up"])
        try await run(["-n", name, "address", "add", "\(link.namespaceAddress)/30", "dev", link.namespaceInterface])
        try await run([
            "-n", name, "address", "add", "\(link.namespaceAddress6)/64", "dev", link.namespaceInterface, "nodad",
        ])
        try await run(["-n", name, "link", "set", link.namespaceInterface, "up"])
    }

    /// A random /30 of 10.213.0.0/16 that no address of the root namespace falls in: its third octet and
    /// its network's fourth octet (a multiple of 4).
    private func freeSubnet() async throws -> (third: Int, network: Int) {
        let addresses = try await run(["-o", "-4", "address", "show"])
        let used = Set(
            addresses.split(whereSeparator: \.isWhitespace).compactMap { word -> Int? in
                let octets = word.split(separator: "/").first?.split(separator: ".").compactMap { Int($0) } ?? []
                guard octets.count == 4, octets[0] == 10, octets[1] == 213 else { return nil }
                return octets[2] * 64 + octets[3] / 4
            })
        for _ in 0..<100 {
            let block = Int.random(in: 0..<(256 * 64))
            if !used.contains(block) { return (block / 64, (block % 64) * 4) }
        }
        throw CommandFailed(description: "no free /30 in 10.213.0.0/16")
    }

    // MARK: Running ip

    /// Runs `ip` (or `tool`, e.g. `tc`) with `arguments`; returns its output. Throws when it fails or takes over 10 s (it is
    /// killed then). The output goes to a file, read once `ip` has exited: nothing is lost or blocks.
    @discardableResult
    func run(_ arguments: [String], tool: URL? = nil) async throws -> String {
        let executable = tool ?? ip
        let command = "`\(executable.lastPathComponent) \(arguments.joined(separator: " "))`"
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("shiftwork-ip-\(UUID().uuidString)")
        guard FileManager.default.createFile(atPath: log.path, contents: nil) else {
            throw CommandFailed(description: "\(command): cannot create \(log.path)")
        }
        defer { try? FileManager.default.removeItem(at: log) }
        let output = try FileHandle(forWritingTo: log)
        defer { try? output.close() }
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let deadline = ContinuousClock.now + .seconds(10)
        while process.isRunning, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(10))
        }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            throw CommandFailed(description: "\(command) did not finish within 10 s")
        }
        let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        guard process.terminationStatus == 0 else {
            throw CommandFailed(
                description: "\(command) failed (\(process.terminationStatus)): "
                    + text.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        return text
    }
}
