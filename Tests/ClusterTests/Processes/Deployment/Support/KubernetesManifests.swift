import Foundation

/// One overlay of deploy/kubernetes, rendered by `kubectl kustomize` (kubectl from the venv of
/// `scripts/setup-python`), checked by `kubernetes-validate --strict` against the Kubernetes schemas when
/// asked (the test of every overlay asks; the others read what it validated), and read back as JSON (PyYAML,
/// `Resources/yaml-documents-to-json.py`).
struct KubernetesManifests {
    /// The overlay's folder under deploy/kubernetes/overlays.
    let overlay: String
    /// The rendered YAML, as kubectl printed it.
    let yaml: String
    /// What `kubernetes-validate` printed (warnings for kinds it has no schema for, such as KEDA's); empty
    /// when not validated.
    let validation: String
    /// The rendered objects.
    let objects: [[String: Any]]

    /// The overlays in deploy/kubernetes/overlays, sorted.
    static func overlays() throws -> [String] {
        let folder = Repository.file("deploy/kubernetes/overlays")
        return try FileManager.default.contentsOfDirectory(atPath: folder.path)
            .filter {
                FileManager.default.fileExists(atPath: folder.appendingPathComponent("\($0)/kustomization.yaml").path)
            }
            .sorted()
    }

    /// Renders `overlay`, validates it against the schemas when `validatingSchemas` (a Python process that
    /// loads them: seconds on a loaded machine), and reads it; throws with the tools' output when a step fails.
    static func render(
        _ overlay: String, scratch: URL, validatingSchemas: Bool = false
    ) async throws -> KubernetesManifests {
        let python = try await PythonEnvironment.shared.python()
        let bin = python.deletingLastPathComponent()
        let (renderStatus, rendered) = try await runToCompletion(
            "kubectl kustomize \(overlay)", bin.appendingPathComponent("kubectl"),
            ["kustomize", Repository.file("deploy/kubernetes/overlays/\(overlay)").path])
        guard renderStatus == 0 else {
            throw DeploymentTestError(
                "kubectl kustomize overlays/\(overlay) failed (status \(renderStatus.map(String.init) ?? "none")):\n\(rendered)"
            )
        }
        let yamlFile = scratch.appendingPathComponent("\(overlay).yaml")
        let jsonFile = scratch.appendingPathComponent("\(overlay).json")
        try Data(rendered.utf8).write(to: yamlFile)
        var validation = ""
        if validatingSchemas {
            let validStatus: Int32?
            (validStatus, validation) = try await runToCompletion(
                "kubernetes-validate \(overlay)", bin.appendingPathComponent("kubernetes-validate"),
                ["--strict", "--quiet", yamlFile.path])
            guard validStatus == 0, !validation.contains("ERROR") else {
                throw DeploymentTestError(
                    "overlays/\(overlay) does not validate against the Kubernetes schemas:\n\(validation)")
            }
        }
        guard let program = Bundle.module.url(forResource: "yaml-documents-to-json", withExtension: "py") else {
            throw DeploymentTestError(
                "yaml-documents-to-json.py is missing from the ClusterTests bundle (see its resources in Package.swift)"
            )
        }
        let (readStatus, readOutput) = try await runToCompletion(
            "yaml-to-json \(overlay)", python, [program.path, yamlFile.path, jsonFile.path])
        guard readStatus == 0, let data = FileManager.default.contents(atPath: jsonFile.path),
            let objects = try JSONSerialization.jsonObject(with: data) as? [[String: Any]]
        else {
            throw DeploymentTestError("PyYAML could not read the rendering of overlays/\(overlay):\n\(readOutput)")
        }
        return KubernetesManifests(overlay: overlay, yaml: rendered, validation: validation, objects: objects)
    }

    /// The object of `kind` named `name`.
    func object(_ kind: String, _ name: String) throws -> [String: Any] {
        guard let found = objects.first(where: { $0["kind"] as? String == kind && $0.name == name }) else {
            throw DeploymentTestError(
                "overlays/\(overlay) has no \(kind) \(name) (it has: \(objects.map { "\($0["kind"] ?? "?")/\($0.name)" }))"
            )
        }
        return found
    }

    /// The objects of `kind`.
    func objects(_ kind: String) -> [[String: Any]] { objects.filter { $0["kind"] as? String == kind } }

    /// The pod template's spec of a workload (Deployment, StatefulSet).
    func podSpec(_ kind: String, _ name: String) throws -> [String: Any] {
        let workload = try object(kind, name)
        guard let spec = workload.at("spec", "template", "spec") as? [String: Any] else {
            throw DeploymentTestError("\(kind) \(name) has no spec.template.spec")
        }
        return spec
    }

    /// The container of a workload's pod template named `container`.
    func container(_ kind: String, _ name: String, _ container: String) throws -> KubernetesContainer {
        let spec = try podSpec(kind, name)
        guard let found = (spec["containers"] as? [[String: Any]])?.first(where: { $0.name == container }) else {
            throw DeploymentTestError("\(kind) \(name) has no container \(container)")
        }
        return KubernetesContainer(definition: found, podSpec: spec)
    }
}

/// A container of a rendered pod template, with the parts the tests read.
struct KubernetesContainer {
    let definition: [String: Any]
    let podSpec: [String: Any]

    var name: String { definition.name }
    var args: [String] { definition["args"] as? [String] ?? [] }
    var command: [String] { definition["command"] as? [String] ?? [] }

    /// Variables set by value (an empty string when `value` is absent).
    var environment: [String: String] {
        var values: [String: String] = [:]
        for variable in definition["env"] as? [[String: Any]] ?? [] where variable["valueFrom"] == nil {
            values[variable.name] = variable["value"] as? String ?? ""
        }
        return values
    }

    /// Every variable's name, set by value or from elsewhere (`valueFrom`).
    var variableNames: [String] { (definition["env"] as? [[String: Any]] ?? []).map(\.name) }

    /// The `valueFrom` of a variable.
    func source(of variable: String) -> [String: Any]? {
        (definition["env"] as? [[String: Any]])?.first { $0.name == variable }?["valueFrom"] as? [String: Any]
    }

    /// The container port called `name`, or the number itself.
    func port(_ reference: Any?) -> Int? {
        if let number = reference as? Int { return number }
        guard let name = reference as? String else { return nil }
        return (definition["ports"] as? [[String: Any]])?.first { $0["name"] as? String == name }?["containerPort"]
            as? Int
    }

    /// A probe (`readinessProbe`, `livenessProbe`, `startupProbe`).
    func probe(_ kind: String) -> [String: Any]? { definition[kind] as? [String: Any] }

    /// Its volume mounts: (volume name, mount path, read-only).
    var mounts: [(volume: String, path: String, readOnly: Bool)] {
        (definition["volumeMounts"] as? [[String: Any]] ?? []).map {
            ($0.name, $0["mountPath"] as? String ?? "", $0["readOnly"] as? Bool ?? false)
        }
    }

    /// The pod's volume called `name`.
    func volume(_ name: String) -> [String: Any]? {
        (podSpec["volumes"] as? [[String: Any]])?.first { $0.name == name }
    }

    /// The mount that holds `path`, if any.
    func mount(holding path: String) -> (volume: String, path: String, readOnly: Bool)? {
        mounts.sorted { $0.path.count > $1.path.count }.first { path == $0.path || path.hasPrefix($0.path + "/") }
    }
}

extension Dictionary where Key == String, Value == Any {
    /// `metadata.name`, or `name` for list elements (containers, variables, volumes).
    var name: String { (self["metadata"] as? [String: Any])?["name"] as? String ?? self["name"] as? String ?? "" }

    /// The value at a path of keys.
    func at(_ keys: String...) -> Any? {
        var current: Any? = self
        for key in keys { current = (current as? [String: Any])?[key] }
        return current
    }
}
