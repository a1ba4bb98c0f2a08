import Foundation

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
                guard let text = entry as? String else {
                    throw DeploymentTestError("\(name).environment: \(entry) is not KEY=VALUE")
                }
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
                volumes.append(
                    Mount(
                        source: long["source"] as? String ?? "", target: target,
                        readOnly: long["read_only"] as? Bool ?? false))
            } else if let text = entry as? String {
                let parts = text.split(separator: ":").map(String.init)
                guard parts.count >= 2 else {
                    throw DeploymentTestError("\(name).volumes: '\(text)' is not SOURCE:TARGET[:MODE]")
                }
                volumes.append(
                    Mount(
                        source: parts[0], target: parts[1],
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
            guard let target = (long["target"] as? NSNumber)?.intValue ?? Int(scalar(long["target"] as Any) ?? "")
            else {
                throw DeploymentTestError("\(service).ports: \(long) has no target port")
            }
            return PortMapping(
                hostIP: long["host_ip"] as? String,
                published: Int(scalar(long["published"] as Any) ?? ""), target: target)
        }
        guard let text = scalar(entry) else { throw DeploymentTestError("\(service).ports: cannot read \(entry)") }
        let withoutProtocol = text.split(separator: "/").first.map(String.init) ?? text
        let parts = withoutProtocol.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        let numbers = parts.suffix(2).compactMap { Int($0) }
        guard (1...3).contains(parts.count), numbers.count == min(parts.count, 2), let target = numbers.last else {
            throw DeploymentTestError(
                "\(service).ports: '\(text)' is not [IP:]HOST:CONTAINER (port ranges are not supported here)")
        }
        return PortMapping(
            hostIP: parts.count == 3 ? parts[0] : nil,
            published: parts.count >= 2 ? numbers.first : nil, target: target)
    }
}
