import Foundation
import XCTest

/// deploy/kubernetes: the objects of every overlay fit together, beyond each being valid on its own
/// (KubernetesDeploymentTests validates them): every NetworkPolicy selects the pods it is for and admits what
/// the cluster needs (the workers to the coordinator's ZeroMQ port, the metrics scrape, the kubelet's HTTP
/// probes), every Service selects pods that open the ports it forwards, every probe names a port its
/// container opens, and that port is the one the program listens on (its `SHIFTWORK_*_LISTEN`).
final class KubernetesObjectsFitTests: DeploymentTestCase {
    /// A pod template of a rendered workload.
    private struct Pod {
        let workload: String
        let labels: [String: String]
        let containers: [KubernetesContainer]

        /// Whether a `matchLabels` selector picks this pod.
        func matches(_ selector: [String: String]) -> Bool {
            selector.allSatisfy { labels[$0.key] == $0.value }
        }

        /// The container port (number) that a Service or probe names (by name or number), if one opens it.
        func openPort(_ reference: Any?) -> Int? {
            for container in containers {
                let declared = (container.definition["ports"] as? [[String: Any]] ?? []).compactMap {
                    $0["containerPort"] as? Int
                }
                if let number = reference as? Int, declared.contains(number) { return number }
                if reference is String, let number = container.port(reference) { return number }
            }
            return nil
        }
    }

    private func pods(_ manifests: KubernetesManifests) -> [Pod] {
        manifests.objects.compactMap { object -> Pod? in
            guard ["Deployment", "StatefulSet", "DaemonSet", "Job"].contains(object["kind"] as? String ?? ""),
                let spec = object.at("spec", "template", "spec") as? [String: Any]
            else { return nil }
            let labels = object.at("spec", "template", "metadata", "labels") as? [String: String] ?? [:]
            let containers = (spec["containers"] as? [[String: Any]] ?? []).map {
                KubernetesContainer(definition: $0, podSpec: spec)
            }
            return Pod(workload: "\(object["kind"] ?? "?")/\(object.name)", labels: labels, containers: containers)
        }
    }

    /// The `matchLabels` of a label selector; fails the test for `matchExpressions`, which these tests do not
    /// evaluate (a selector they cannot read must not pass unread).
    private func matchLabels(_ selector: Any?, _ what: String) -> [String: String] {
        let selector = selector as? [String: Any] ?? [:]
        XCTAssertNil(
            selector["matchExpressions"], "\(what): matchExpressions is not evaluated by this test: use matchLabels")
        return selector["matchLabels"] as? [String: String] ?? [:]
    }

    /// The port in a `HOST:PORT` or `tcp://HOST:PORT` listen address.
    private func listenPort(_ address: String?) -> Int? {
        guard let address, let colon = address.lastIndex(of: ":") else { return nil }
        return Int(address[address.index(after: colon)...])
    }

    func testEveryNetworkPolicyAdmitsTheWorkersTheScrapeAndTheProbes() async throws {
        for overlay in try KubernetesManifests.overlays() {
            let manifests = try await KubernetesManifests.render(overlay, scratch: scratch)
            let pods = pods(manifests)
            let policies = manifests.objects("NetworkPolicy")
            XCTAssertFalse(
                policies.isEmpty, "overlays/\(overlay): no NetworkPolicy (the coordinator's port is open without keys)")
            let coordinator = try manifests.container("StatefulSet", "shiftwork-coordinator", "coordinator")
            let zmqPort = try XCTUnwrap(
                listenPort(coordinator.environment["SHIFTWORK_LISTEN"]), "overlays/\(overlay): SHIFTWORK_LISTEN")
            let metricsPort = listenPort(coordinator.environment["SHIFTWORK_METRICS_LISTEN"])
            let workers = pods.filter { $0.workload == "Deployment/shiftwork-worker" }
            XCTAssertEqual(workers.count, 1, "overlays/\(overlay): the worker Deployment")

            for policy in policies {
                let what = "overlays/\(overlay): NetworkPolicy \(policy.name)"
                let selector = matchLabels(policy.at("spec", "podSelector"), what)
                let selected = pods.filter { $0.matches(selector) }
                XCTAssertFalse(
                    selected.isEmpty,
                    "\(what) selects no pod (its podSelector \(selector); pods: \(pods.map { "\($0.workload) \($0.labels)" }))"
                )
                let types = policy.at("spec", "policyTypes") as? [String] ?? ["Ingress"]
                guard types.contains("Ingress") else { continue }
                let rules = policy.at("spec", "ingress") as? [[String: Any]] ?? []

                /// Whether a pod with `labels` (nil: any source, e.g. the kubelet or a scraper elsewhere) may reach `port`.
                func admits(_ port: Int, from labels: [String: String]?) -> Bool {
                    rules.contains { rule in
                        let ports = rule["ports"] as? [[String: Any]]
                        let portAdmitted =
                            ports == nil
                            || ports!.contains { entry in
                                if let number = entry["port"] as? Int { return number == port }
                                return selected.contains { $0.openPort(entry["port"]) == port }
                            }
                        guard portAdmitted else { return false }
                        guard let peers = rule["from"] as? [[String: Any]], !peers.isEmpty else { return true }
                        return peers.contains { peer in
                            if peer["ipBlock"] != nil || peer["namespaceSelector"] != nil && peer["podSelector"] == nil
                            {
                                return labels == nil && peer["ipBlock"] == nil
                            }
                            guard let labels, peer["podSelector"] != nil else { return false }
                            return matchLabels(peer["podSelector"], what).allSatisfy { labels[$0.key] == $0.value }
                        }
                    }
                }

                if selected.contains(where: { $0.workload == "StatefulSet/shiftwork-coordinator" }) {
                    for worker in workers {
                        XCTAssertTrue(
                            admits(zmqPort, from: worker.labels),
                            "\(what) does not admit the workers (pod labels \(worker.labels)) to the coordinator's port \(zmqPort)"
                        )
                    }
                    if let metricsPort {
                        XCTAssertTrue(
                            admits(metricsPort, from: nil),
                            "\(what) does not admit the metrics scrape on port \(metricsPort)")
                    }
                    // The pair's port: the other coordinator, and not the workers.
                    if let pairPort = listenPort(coordinator.environment["SHIFTWORK_HA_LISTEN"]) {
                        let coordinators = pods.filter { $0.workload == "StatefulSet/shiftwork-coordinator" }
                        for pod in coordinators {
                            XCTAssertTrue(
                                admits(pairPort, from: pod.labels),
                                "\(what) does not admit the other coordinator to the pair's port \(pairPort)")
                        }
                        for worker in workers {
                            XCTAssertFalse(
                                admits(pairPort, from: worker.labels),
                                "\(what) admits the workers to the pair's port \(pairPort), which is the coordinators' own"
                            )
                        }
                    }
                }
                // The kubelet's HTTP and TCP probes come from the node, not from a pod.
                for pod in selected {
                    for container in pod.containers {
                        for kind in ["readinessProbe", "livenessProbe", "startupProbe"] {
                            guard let probe = container.probe(kind),
                                let reference = probe.at("httpGet", "port") ?? probe.at("tcpSocket", "port")
                            else { continue }
                            let port = try XCTUnwrap(
                                pod.openPort(reference),
                                "\(pod.workload): \(kind) names port \(reference), which no container opens")
                            XCTAssertTrue(
                                admits(port, from: nil),
                                "\(what) does not admit \(pod.workload)'s \(kind) on port \(port)")
                        }
                    }
                }
            }
        }
    }

    func testEveryServiceSelectsPodsThatOpenItsPorts() async throws {
        for overlay in try KubernetesManifests.overlays() {
            let manifests = try await KubernetesManifests.render(overlay, scratch: scratch)
            let pods = pods(manifests)
            for service in manifests.objects("Service") {
                let what = "overlays/\(overlay): Service \(service.name)"
                let selector = service.at("spec", "selector") as? [String: String] ?? [:]
                XCTAssertFalse(selector.isEmpty, "\(what) has no selector")
                let selected = pods.filter { $0.matches(selector) }
                XCTAssertFalse(
                    selected.isEmpty,
                    "\(what) selects no pod (selector \(selector); pods: \(pods.map { "\($0.workload) \($0.labels)" }))"
                )
                for port in service.at("spec", "ports") as? [[String: Any]] ?? [] {
                    let target = port["targetPort"] ?? port["port"]
                    for pod in selected {
                        XCTAssertNotNil(
                            pod.openPort(target),
                            "\(what) forwards to port \(target ?? "?"), which \(pod.workload) does not open")
                    }
                }
            }
        }
    }

    func testEveryProbeAndDeclaredPortIsOneTheProgramListensOn() async throws {
        for overlay in try KubernetesManifests.overlays() {
            let manifests = try await KubernetesManifests.render(overlay, scratch: scratch)
            for pod in pods(manifests) {
                for container in pod.containers {
                    let what = "overlays/\(overlay): \(pod.workload) container \(container.name)"
                    // Every port the program listens on, from its settings.
                    let listened = Set(
                        [
                            "SHIFTWORK_LISTEN", "SHIFTWORK_METRICS_LISTEN", "SHIFTWORK_HEALTH_LISTEN",
                            "SHIFTWORK_HTTP_LISTEN", "SHIFTWORK_HA_LISTEN",
                        ]
                        .compactMap { listenPort(container.environment[$0]) })
                    for declared in (container.definition["ports"] as? [[String: Any]] ?? []).compactMap({
                        $0["containerPort"] as? Int
                    }) {
                        XCTAssertTrue(
                            listened.contains(declared),
                            "\(what) declares port \(declared), on which the program does not listen (its *_LISTEN: \(listened.sorted()))"
                        )
                    }
                    for kind in ["readinessProbe", "livenessProbe", "startupProbe"] {
                        guard let probe = container.probe(kind) else { continue }
                        if let reference = probe.at("httpGet", "port") ?? probe.at("tcpSocket", "port") {
                            let port = try XCTUnwrap(
                                container.port(reference),
                                "\(what): \(kind) names port \(reference), which the container does not open")
                            XCTAssertTrue(
                                listened.contains(port),
                                "\(what): \(kind) probes port \(port), on which the program does not listen")
                        } else {
                            XCTAssertNotNil(
                                probe.at("exec", "command"), "\(what): \(kind) is neither HTTP, TCP nor exec")
                        }
                    }
                }
            }
        }
    }

    func testEveryContainerShowsWhyItStoppedInItsTerminationMessage() async throws {
        for overlay in try KubernetesManifests.overlays() {
            let manifests = try await KubernetesManifests.render(overlay, scratch: scratch)
            for pod in pods(manifests) {
                for container in pod.containers {
                    // A bad setting stops the program at once with a message: `kubectl describe pod` shows it
                    // beside the CrashLoopBackOff only with this policy (the default shows an empty message).
                    XCTAssertEqual(
                        container.definition["terminationMessagePolicy"] as? String, "FallbackToLogsOnError",
                        "overlays/\(overlay): \(pod.workload) container \(container.name)")
                }
            }
        }
    }
}
