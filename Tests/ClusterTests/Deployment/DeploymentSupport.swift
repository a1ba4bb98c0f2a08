import Foundation
import Imaging
import ShiftworkTestSupport
import XCTest

#if canImport(Glibc)
import Glibc
#endif

/// A failure of the deployment tests' own set-up, with everything needed to understand it.
struct DeploymentTestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Paths in the repository these tests read (compose.yaml, Dockerfile, scripts, docs/examples).
enum Repository {
    /// The repository's root, found from this source file (Tests/ClusterTests/Deployment/…).
    static let root: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()  // Deployment
        .deletingLastPathComponent()  // ClusterTests
        .deletingLastPathComponent()  // Tests
        .deletingLastPathComponent()

    static func file(_ relativePath: String) -> URL { root.appendingPathComponent(relativePath) }

    static func text(_ relativePath: String) throws -> String {
        do {
            return try String(contentsOf: file(relativePath), encoding: .utf8)
        } catch {
            throw DeploymentTestError("cannot read \(file(relativePath).path): \(error)")
        }
    }
}

/// The Python virtual environment made by `scripts/setup-python` (pyzmq, protobuf, PyYAML and the
/// protobuf module generated from proto/). Set up at most once per test process; a failure to set it up
/// fails the test (it is never skipped), with the script's output.
actor PythonEnvironment {
    static let shared = PythonEnvironment()
    private var setup: Task<URL, any Error>?

    /// The venv's Python interpreter, after running `scripts/setup-python`.
    ///
    /// The script is idempotent and quick when nothing is missing; running it every time (rather than only
    /// when `.venv-test` is missing) also regenerates the protobuf module, so it never lags behind proto/.
    func python() async throws -> URL {
        if let setup { return try await setup.value }
        let task = Task<URL, any Error> {
            let script = Repository.file("scripts/setup-python")
            let process = try ManagedProcess(
                "setup-python", executable: URL(fileURLWithPath: "/bin/bash"), arguments: [script.path],
                currentDirectory: Repository.root)
            let status = await process.waitForExit(timeout: .seconds(900))
            if status == nil { await process.stop() }
            guard status == 0 else {
                throw DeploymentTestError(
                    "scripts/setup-python \(status.map { "exited with status \($0)" } ?? "did not finish in 15 minutes"):\n"
                        + process.outputText)
            }
            return Repository.file(".venv-test/bin/python")
        }
        setup = task
        return try await task.value
    }
}

/// Runs `executable` to completion and returns its exit status and output. Like every process these
/// tests start, it sees only the `SHIFTWORK_*` variables given in `environment`.
func runToCompletion(
    _ name: String, _ executable: URL, _ arguments: [String], environment: [String: String] = [:],
    timeout: Duration = .seconds(60)
) async throws -> (status: Int32?, output: String) {
    let process = try ManagedProcess(name, executable: executable, arguments: arguments,
                                     environment: blankingInheritedShiftworkVariables(except: environment),
                                     currentDirectory: Repository.root)
    let status = await process.waitForExit(timeout: timeout)
    if status == nil { await process.stop() }
    return (status, process.outputText)
}

// MARK: - compose.yaml

/// compose.yaml, converted to JSON by PyYAML (in the venv of `scripts/setup-python`) and read with
/// JSONSerialization: only the parts the tests use, in the forms the Compose specification allows.
struct ComposeFile {
    let services: [String: ComposeService]
    let raw: [String: Any]

    /// Reads and converts `compose.yaml` at the repository's root, with the override files given after
    /// it merged in as `docker compose -f compose.yaml -f OVERRIDE` does: mappings (such as
    /// `environment`) merged key by key, `volumes` merged by container path, `ports` concatenated, any
    /// other value replaced.
    static func load(_ relativePaths: String...) async throws -> ComposeFile {
        let paths = relativePaths.isEmpty ? ["compose.yaml"] : relativePaths
        let python = try await PythonEnvironment.shared.python()
        let json = FileManager.default.temporaryDirectory.appendingPathComponent("shiftwork-compose-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: json) }
        let program = """
            import json, sys, yaml
            def target(volume):
                return volume.get("target") if isinstance(volume, dict) else str(volume).split(":")[1 if ":" in str(volume) else 0]
            def merge(base, override, key=None):
                if isinstance(base, dict) and isinstance(override, dict):
                    merged = dict(base)
                    for k, v in override.items():
                        merged[k] = merge(base[k], v, k) if k in base else v
                    return merged
                if key == "volumes" and isinstance(base, list) and isinstance(override, list):
                    replaced = {target(v) for v in override}
                    return [v for v in base if target(v) not in replaced] + override
                if key == "ports" and isinstance(base, list) and isinstance(override, list):
                    return base + override
                return override
            document = {}
            for path in sys.argv[2:]:
                document = merge(document, yaml.safe_load(open(path)))
            json.dump(document, open(sys.argv[1], "w"))
            """
        let (status, output) = try await runToCompletion(
            "yaml-to-json", python, ["-c", program, json.path] + paths.map { Repository.file($0).path })
        guard status == 0, let data = FileManager.default.contents(atPath: json.path) else {
            throw DeploymentTestError("PyYAML could not read \(paths.joined(separator: " + ")) (status \(status.map(String.init) ?? "none")):\n\(output)")
        }
        return try ComposeFile(json: data)
    }

    init(json: Data) throws {
        guard let object = try JSONSerialization.jsonObject(with: json) as? [String: Any] else {
            throw DeploymentTestError("compose.yaml is not a mapping at the top level")
        }
        raw = object
        guard let services = object["services"] as? [String: Any], !services.isEmpty else {
            throw DeploymentTestError("compose.yaml has no services")
        }
        var parsed: [String: ComposeService] = [:]
        for (name, value) in services {
            guard let definition = value as? [String: Any] else {
                throw DeploymentTestError("compose.yaml: service '\(name)' is not a mapping")
            }
            parsed[name] = try ComposeService(name: name, definition: definition)
        }
        self.services = parsed
    }

    func service(_ name: String) throws -> ComposeService {
        guard let service = services[name] else {
            throw DeploymentTestError("compose.yaml has no service '\(name)' (it has: \(services.keys.sorted().joined(separator: ", ")))")
        }
        return service
    }

    /// Service names in an order that starts every service after the ones it depends on.
    func startOrder() throws -> [String] {
        var order: [String] = []
        var visiting: Set<String> = []
        func visit(_ name: String) throws {
            if order.contains(name) { return }
            guard !visiting.contains(name) else { throw DeploymentTestError("compose.yaml: depends_on cycle through '\(name)'") }
            visiting.insert(name)
            for dependency in try service(name).dependsOn.keys.sorted() { try visit(dependency) }
            visiting.remove(name)
            order.append(name)
        }
        for name in services.keys.sorted() { try visit(name) }
        return order
    }
}

/// One service of compose.yaml.
struct ComposeService {
    let name: String
    let definition: [String: Any]
    /// `command`, as the argument vector given to the image's entrypoint.
    let command: [String]
    /// `environment`, with values as strings (a null value means "not set").
    let environment: [String: String]
    /// `ports`: published ports.
    let ports: [PortMapping]
    /// `depends_on`: each dependency and its condition (`service_started` for the short form).
    let dependsOn: [String: String]
    /// `healthcheck.test`, e.g. `["CMD", "shiftwork", "status", …]`, or nil.
    let healthcheck: [String]?
    /// `volumes`: what is mounted where in the container.
    let volumes: [Mount]

    /// A volume or bind mount: `source` is a host path (bind mount) or a volume name.
    struct Mount: Equatable {
        var source: String
        var target: String
        var readOnly: Bool
        /// A bind mount of a host path (relative to the compose file, or absolute), not a named volume.
        var isBindMount: Bool { source.hasPrefix(".") || source.hasPrefix("/") }
    }

    struct PortMapping: Equatable {
        var hostIP: String?
        var published: Int?
        var target: Int
    }

    init(name: String, definition: [String: Any]) throws {
        self.name = name
        self.definition = definition
        command = try Self.argumentVector(definition["command"], what: "\(name).command") ?? []

        var environment: [String: String] = [:]
        switch definition["environment"] {
        case nil:
            break
        case let map as [String: Any]:
            for (key, value) in map {
                if let text = Self.scalar(value) { environment[key] = text }
            }
        case let list as [Any]:
            for entry in list {
                guard let text = entry as? String else { throw DeploymentTestError("\(name).environment: \(entry) is not KEY=VALUE") }
                let parts = text.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                if parts.count == 2 { environment[String(parts[0])] = String(parts[1]) }
            }
        default:
            throw DeploymentTestError("\(name).environment is neither a mapping nor a list")
        }
        self.environment = environment

        var ports: [PortMapping] = []
        for entry in definition["ports"] as? [Any] ?? [] {
            ports.append(try Self.portMapping(entry, service: name))
        }
        self.ports = ports

        switch definition["depends_on"] {
        case nil:
            dependsOn = [:]
        case let list as [String]:
            dependsOn = Dictionary(uniqueKeysWithValues: list.map { ($0, "service_started") })
        case let map as [String: Any]:
            dependsOn = map.mapValues { (($0 as? [String: Any])?["condition"] as? String) ?? "service_started" }
        default:
            throw DeploymentTestError("\(name).depends_on is neither a list nor a mapping")
        }

        var volumes: [Mount] = []
        for entry in definition["volumes"] as? [Any] ?? [] {
            if let long = entry as? [String: Any], let target = long["target"] as? String {
                volumes.append(Mount(source: long["source"] as? String ?? "", target: target, readOnly: long["read_only"] as? Bool ?? false))
            } else if let text = entry as? String {
                let parts = text.split(separator: ":").map(String.init)
                guard parts.count >= 2 else { throw DeploymentTestError("\(name).volumes: '\(text)' is not SOURCE:TARGET[:MODE]") }
                volumes.append(Mount(source: parts[0], target: parts[1],
                                     readOnly: parts.count > 2 && parts[2].split(separator: ",").contains("ro")))
            } else {
                throw DeploymentTestError("\(name).volumes: cannot read \(entry)")
            }
        }
        self.volumes = volumes

        if let check = definition["healthcheck"] as? [String: Any], check["disable"] as? Bool != true {
            switch check["test"] {
            case let text as String: healthcheck = ["CMD-SHELL", text]
            case let list as [Any]: healthcheck = list.compactMap(Self.scalar)
            default: healthcheck = nil
            }
        } else {
            healthcheck = nil
        }
    }

    /// A string setting of the service (e.g. `stop_signal`), if present.
    func string(_ key: String) -> String? { Self.scalar(definition[key] as Any) }

    /// A duration setting of the service (e.g. `stop_grace_period`), if present.
    func duration(_ key: String) throws -> Duration? {
        guard let text = string(key) else { return nil }
        return try ComposeDuration.parse(text)
    }

    private static func scalar(_ value: Any) -> String? {
        switch value {
        case let text as String: text
        case let number as NSNumber: number.stringValue
        default: nil
        }
    }

    private static func argumentVector(_ value: Any?, what: String) throws -> [String]? {
        switch value {
        case nil: return nil
        case let list as [Any]: return list.compactMap(scalar)
        case let text as String:
            guard !text.contains("\""), !text.contains("'") else {
                throw DeploymentTestError("\(what): use the list form for a command with quotes")
            }
            return text.split(whereSeparator: \.isWhitespace).map(String.init)
        default: throw DeploymentTestError("\(what) is neither a list nor a string")
        }
    }

    /// The short syntax (`"5570"`, `"5570:5570"`, `"127.0.0.1:5570:5570"`, optionally `/tcp`) or the
    /// long one (`target`, `published`, `host_ip`).
    static func portMapping(_ entry: Any, service: String) throws -> PortMapping {
        if let long = entry as? [String: Any] {
            guard let target = (long["target"] as? NSNumber)?.intValue ?? Int(scalar(long["target"] as Any) ?? "") else {
                throw DeploymentTestError("\(service).ports: \(long) has no target port")
            }
            return PortMapping(hostIP: long["host_ip"] as? String,
                               published: Int(scalar(long["published"] as Any) ?? ""), target: target)
        }
        guard let text = scalar(entry) else { throw DeploymentTestError("\(service).ports: cannot read \(entry)") }
        let withoutProtocol = text.split(separator: "/").first.map(String.init) ?? text
        let parts = withoutProtocol.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        let numbers = parts.suffix(2).compactMap { Int($0) }
        guard (1...3).contains(parts.count), numbers.count == min(parts.count, 2), let target = numbers.last else {
            throw DeploymentTestError("\(service).ports: '\(text)' is not [IP:]HOST:CONTAINER (port ranges are not supported here)")
        }
        return PortMapping(hostIP: parts.count == 3 ? parts[0] : nil,
                           published: parts.count >= 2 ? numbers.first : nil, target: target)
    }
}

/// Compose durations: `10s`, `1m30s`, `500ms`, `1h`.
enum ComposeDuration {
    static func parse(_ text: String) throws -> Duration {
        var total = Duration.zero
        var rest = Substring(text.trimmingCharacters(in: .whitespaces))
        guard !rest.isEmpty else { throw DeploymentTestError("empty duration") }
        while !rest.isEmpty {
            let digits = rest.prefix { $0.isNumber || $0 == "." }
            guard let value = Double(digits) else { throw DeploymentTestError("'\(text)' is not a duration like 10s or 1m30s") }
            rest = rest.dropFirst(digits.count)
            let unit = rest.prefix { $0.isLetter }
            rest = rest.dropFirst(unit.count)
            let seconds: Double
            switch unit {
            case "h": seconds = value * 3600
            case "m": seconds = value * 60
            case "s": seconds = value
            case "ms": seconds = value / 1000
            case "us": seconds = value / 1_000_000
            default: throw DeploymentTestError("'\(text)': unknown unit '\(unit)' (use h, m, s, ms or us)")
            }
            total += .milliseconds(Int64((seconds * 1000).rounded()))
        }
        return total
    }
}

// MARK: - running services as local processes

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
                throw DeploymentTestError("'\(text)' in service '\(service)' names host '\(host)', which is neither a service of compose.yaml nor a local address")
            }
            result += "tcp://127.0.0.1:\(try port(of: owner, containerPort: containerPort))"
            rest = rest[match.range.upperBound...]
        }
        return result + rest
    }
}

/// A TCP port on 127.0.0.1 that nothing listens on right now (the kernel's choice of an ephemeral port).
func freeLoopbackPort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw DeploymentTestError("socket() failed: errno \(errno)") }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = 0
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard bound == 0 else { throw DeploymentTestError("bind(127.0.0.1:0) failed: errno \(errno)") }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let named = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    guard named == 0 else { throw DeploymentTestError("getsockname failed: errno \(errno)") }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// Environment additions that blank every `SHIFTWORK_*` variable of the test's own environment that
/// `keep` does not set (an empty value counts as unset for the CLI), so a container-like process sees
/// only its service's settings.
func blankingInheritedShiftworkVariables(except keep: [String: String]) -> [String: String] {
    var environment: [String: String] = [:]
    for key in ProcessInfo.processInfo.environment.keys where key.hasPrefix("SHIFTWORK_") && keep[key] == nil {
        environment[key] = ""
    }
    return environment.merging(keep) { _, kept in kept }
}

/// Parses `shiftwork status --json`.
struct ClusterStatus {
    struct Worker { let id: String; let completed: Int }
    struct Batch { let id: String; let items: Int; let succeeded: Int; let failed: Int; let cancelled: Int }
    let workers: [Worker]
    let batches: [Batch]

    init(json text: String) throws {
        guard let start = text.firstIndex(of: "{"),
              let object = try? JSONSerialization.jsonObject(with: Data(text[start...].utf8)) as? [String: Any]
        else { throw DeploymentTestError("`shiftwork status --json` printed no JSON object:\n\(text)") }
        workers = (object["workers"] as? [[String: Any]] ?? []).map {
            Worker(id: $0["id"] as? String ?? "", completed: ($0["completed"] as? NSNumber)?.intValue ?? -1)
        }
        batches = (object["batches"] as? [[String: Any]] ?? []).map {
            Batch(id: $0["id"] as? String ?? "", items: ($0["items"] as? NSNumber)?.intValue ?? -1,
                  succeeded: ($0["succeeded"] as? NSNumber)?.intValue ?? -1,
                  failed: ($0["failed"] as? NSNumber)?.intValue ?? -1,
                  cancelled: ($0["cancelled"] as? NSNumber)?.intValue ?? -1)
        }
    }
}

// MARK: - a test case that owns processes

/// Starts processes and an HTTP server for a test, and stops all of them when it ends.
class DeploymentTestCase: XCTestCase {
    private(set) var processes: [ManagedProcess] = []
    var server: TestHTTPServer?
    var scratch: URL!

    override func setUp() async throws {
        scratch = FileManager.default.temporaryDirectory.appendingPathComponent("shiftwork-deployment-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
    }

    override func tearDown() async throws {
        for process in processes.reversed() { await process.stop() }
        processes = []
        server?.shutdown()
        server = nil
        try? FileManager.default.removeItem(at: scratch)
    }

    /// Starts `executable` (the `shiftwork` binary unless given), with only the `SHIFTWORK_*` variables
    /// of `environment`; the test stops it at the latest in tearDown.
    func launch(_ name: String, _ arguments: [String], executable: URL = ShiftworkBinary.url,
                environment: [String: String] = [:]) throws -> ManagedProcess {
        let process = try ManagedProcess(name, executable: executable, arguments: arguments,
                                         environment: blankingInheritedShiftworkVariables(except: environment),
                                         currentDirectory: Repository.root)
        processes.append(process)
        return process
    }

    /// Everything every process of this test printed so far, for failure messages.
    var allOutput: String {
        processes.map { "--- \($0.name)\($0.isRunning ? "" : " (exited)"):\n\($0.outputText)" }.joined(separator: "\n")
    }

    /// Starts a coordinator on a free loopback port (`tcp://127.0.0.1:*`) and returns its endpoint:
    /// with CurveZMQ when `keys` are given, else `--insecure`.
    func startCoordinator(keys: TestKeys? = nil) async throws -> String {
        let security = keys.map { ["--secret-key", $0.secretKey("coordinator"), "--allow-keys", $0.allowList.path] } ?? ["--insecure"]
        let coordinator = try launch("coordinator", ["coordinator", "--listen", "tcp://127.0.0.1:*"] + security)
        let line = await coordinator.waitForLine { $0.contains("coordinator listening on ") }
        guard let endpoint = line?.components(separatedBy: "listening on ").last else {
            throw DeploymentTestError("the coordinator did not start:\n\(coordinator.outputText)")
        }
        return endpoint.trimmingCharacters(in: .whitespaces)
    }

    /// Serves synthetic images (alternately JPEG and PNG, each of a distinct size) and returns them.
    func serveImages(_ count: Int, prefix: String = "photo") throws -> [ServedImage] {
        let server = try self.server ?? TestHTTPServer()
        self.server = server
        return try (0..<count).map { index in
            let format: ImageFormat = index % 2 == 0 ? .jpeg : .png
            let (width, height) = (150 + 10 * index, 100 + 6 * index)
            let bytes = try SyntheticImages.make(width: width, height: height, format: format, seed: UInt64(100 + index))
            let path = "/images/\(prefix)-\(index).\(format.fileExtension)"
            server.serve(path: path, body: bytes, contentType: format.mediaType)
            return ServedImage(url: server.url(path), stem: "\(prefix)-\(index)", width: width, height: height, format: format)
        }
    }

    /// Checks that `directory` holds the tilt-shifted `image` (same name, format and size).
    func assertOutput(of image: ServedImage, in directory: URL, _ context: @autoclosure () -> String,
                      file: StaticString = #filePath, line: UInt = #line) {
        let output = directory.appendingPathComponent("\(image.stem).\(image.format.fileExtension)")
        guard let data = FileManager.default.contents(atPath: output.path) else {
            XCTFail("missing output \(output.path) for \(image.url):\n\(context())", file: file, line: line)
            return
        }
        do {
            let (decoded, format) = try ImageCodec.decode([UInt8](data))
            XCTAssertEqual(format, image.format, "format of \(output.lastPathComponent)", file: file, line: line)
            XCTAssertEqual(decoded.width, image.width, "width of \(output.lastPathComponent)", file: file, line: line)
            XCTAssertEqual(decoded.height, image.height, "height of \(output.lastPathComponent)", file: file, line: line)
        } catch {
            XCTFail("\(output.path) is not a readable image: \(error)\n\(context())", file: file, line: line)
        }
    }
}

/// An image the test's HTTP server serves.
struct ServedImage {
    let url: String
    /// The output's file name without extension (the input's, as `shiftwork submit` names it).
    let stem: String
    let width: Int
    let height: Int
    let format: ImageFormat
}
