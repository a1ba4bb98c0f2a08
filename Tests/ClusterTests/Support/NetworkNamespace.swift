import Foundation

/// A network namespace of its own, joined to the root namespace by veth links, so that a test can run
/// a process on another "host" and cut it off the network (`ip link set … down`) while it keeps
/// running.
///
/// Each link is a veth pair with addresses from a private /30 in 10.213.0.0/16 that no interface of
/// the root namespace uses: `.1` on the host side, `.2` in the namespace. Names are unique per
/// instance. `destroy()` kills whatever still runs inside, deletes the namespace and the links, and
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
        guard let ip = ["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"]
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

    /// Kills every process still inside the namespace (all were started by this test), then deletes the
    /// namespace and its links. Idempotent; never throws, never hangs.
    func destroy() async {
        guard !destroyed else { return }
        destroyed = true
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
        let link = Link(
            hostInterface: "sw\(tag)h\(index)", namespaceInterface: "sw\(tag)n\(index)",
            hostAddress: "10.213.\(subnet.third).\(subnet.network + 1)",
            namespaceAddress: "10.213.\(subnet.third).\(subnet.network + 2)")
        try await run(["link", "add", link.hostInterface, "type", "veth", "peer", "name", link.namespaceInterface,
                       "netns", name])
        links.append(link)
        try await run(["address", "add", "\(link.hostAddress)/30", "dev", link.hostInterface])
        try await run(["link", "set", link.hostInterface, "up"])
        try await run(["-n", name, "address", "add", "\(link.namespaceAddress)/30", "dev", link.namespaceInterface])
        try await run(["-n", name, "link", "set", link.namespaceInterface, "up"])
    }

    /// A random /30 of 10.213.0.0/16 that no address of the root namespace falls in: its third octet and
    /// its network's fourth octet (a multiple of 4).
    private func freeSubnet() async throws -> (third: Int, network: Int) {
        let addresses = try await run(["-o", "-4", "address", "show"])
        let used = Set(addresses.split(whereSeparator: \.isWhitespace).compactMap { word -> Int? in
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

    /// Runs `ip` with `arguments`; returns its output. Throws when it fails or takes over 10 s (it is
    /// killed then). The output goes to a file, read once `ip` has exited: nothing is lost or blocks.
    @discardableResult
    private func run(_ arguments: [String]) async throws -> String {
        let command = "`ip \(arguments.joined(separator: " "))`"
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("shiftwork-ip-\(UUID().uuidString)")
        guard FileManager.default.createFile(atPath: log.path, contents: nil) else {
            throw CommandFailed(description: "\(command): cannot create \(log.path)")
        }
        defer { try? FileManager.default.removeItem(at: log) }
        let output = try FileHandle(forWritingTo: log)
        defer { try? output.close() }
        let process = Process()
        process.executableURL = ip
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
            throw CommandFailed(description: "\(command) failed (\(process.terminationStatus)): "
                                + text.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        return text
    }
}
