import Foundation

/// compose.yaml, converted to JSON by PyYAML (`Resources/compose-to-json.py`, run in the venv of
/// `scripts/setup-python`) and read with JSONSerialization: only the parts the tests use, in the forms
/// the Compose specification allows.
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
        let json = FileManager.default.temporaryDirectory.appendingPathComponent(
            "shiftwork-compose-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: json) }
        guard let program = Bundle.module.url(forResource: "compose-to-json", withExtension: "py") else {
            throw DeploymentTestError(
                "compose-to-json.py is missing from the ClusterTests bundle (see its resources in Package.swift)")
        }
        let (status, output) = try await runToCompletion(
            "yaml-to-json", python, [program.path, json.path] + paths.map { Repository.file($0).path })
        guard status == 0, let data = FileManager.default.contents(atPath: json.path) else {
            throw DeploymentTestError(
                "PyYAML could not read \(paths.joined(separator: " + ")) (status \(status.map(String.init) ?? "none")):\n\(output)"
            )
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
            throw DeploymentTestError(
                "compose.yaml has no service '\(name)' (it has: \(services.keys.sorted().joined(separator: ", ")))")
        }
        return service
    }

    /// Service names in an order that starts every service after the ones it depends on.
    func startOrder() throws -> [String] {
        var order: [String] = []
        var visiting: Set<String> = []
        func visit(_ name: String) throws {
            if order.contains(name) { return }
            guard !visiting.contains(name) else {
                throw DeploymentTestError("compose.yaml: depends_on cycle through '\(name)'")
            }
            visiting.insert(name)
            for dependency in try service(name).dependsOn.keys.sorted() { try visit(dependency) }
            visiting.remove(name)
            order.append(name)
        }
        for name in services.keys.sorted() { try visit(name) }
        return order
    }
}
