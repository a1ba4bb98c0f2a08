import Foundation
import ShiftworkTestSupport
import XCTest

#if canImport(Glibc)
import Glibc
#endif

/// deploy/kubernetes without a cluster (none exists where the tests run): every overlay is rendered by
/// `kubectl kustomize` and validated against the Kubernetes schemas (`kubernetes-validate --strict`);
/// the containers' commands, flags and `SHIFTWORK_*` variables are checked against `--help` of the real
/// `shiftwork` binary; and the dev overlay's coordinator and workers run as local processes with their
/// rendered environment, probed as the kubelet would probe them, and stopped with SIGTERM within their
/// grace period. The coordinators are a pair (a StatefulSet of two, the role from the ordinal: `podRoleScript`);
/// the pair itself runs in Tests/Containers/test_kubernetes_pods.py, which kills the active pod.
final class KubernetesDeploymentTests: DeploymentTestCase {
    private let coordinatorName = "shiftwork-coordinator"
    private let workerName = "shiftwork-worker"

    // MARK: Rendering and schemas

    func testEveryOverlayRendersAndValidatesAgainstTheKubernetesSchemas() async throws {
        let overlays = try KubernetesManifests.overlays()
        for expected in ["dev", "curve", "shared-sink", "keda", "hpa", "production"] {
            XCTAssertTrue(
                overlays.contains(expected), "deploy/kubernetes/overlays/\(expected) is missing (found \(overlays))")
        }
        let builtIn: Set<String> = [
            "Service", "StatefulSet", "Deployment", "NetworkPolicy", "PersistentVolumeClaim",
            "HorizontalPodAutoscaler",
        ]
        for overlay in overlays {
            let manifests = try await KubernetesManifests.render(overlay, scratch: scratch, validatingSchemas: true)
            for object in manifests.objects {
                let kind = object["kind"] as? String ?? "?"
                XCTAssertTrue(
                    builtIn.contains(kind) || kind == "ScaledObject",
                    "overlays/\(overlay): \(kind) \(object.name) is neither a built-in kind the schemas check nor KEDA's ScaledObject"
                )
                XCTAssertEqual(
                    object.at("metadata", "namespace") as? String, "shiftwork",
                    "overlays/\(overlay): \(kind) \(object.name)")
                if kind == "ScaledObject" {
                    XCTAssertTrue(
                        manifests.validation.contains("ScaledObject"),
                        "kubernetes-validate did not mention the ScaledObject it skips")
                }
            }
            // The workloads every overlay runs.
            _ = try manifests.container("StatefulSet", coordinatorName, "coordinator")
            _ = try manifests.container("Deployment", workerName, "worker")
        }
    }

    // MARK: Against the real CLI

    func testCommandsFlagsAndVariablesExistInTheShiftworkCLI() async throws {
        var helpBySubcommand: [String: String] = [:]
        func help(_ subcommand: String) async throws -> String {
            if let known = helpBySubcommand[subcommand] { return known }
            let (status, text) = try await runToCompletion(
                "\(subcommand) --help", ShiftworkBinary.url, [subcommand, "--help"])
            XCTAssertEqual(status, 0, "shiftwork \(subcommand) --help failed: \(text)")
            let flat = text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
            helpBySubcommand[subcommand] = flat
            return flat
        }
        func check(_ arguments: [String], in overlay: String, of what: String) async throws {
            guard let subcommand = arguments.first else {
                return XCTFail("overlays/\(overlay): \(what) runs no subcommand")
            }
            let text = try await help(subcommand)
            XCTAssertTrue(
                text.contains("USAGE: shiftwork \(subcommand)"),
                "overlays/\(overlay): \(what): `\(subcommand)` is not a shiftwork subcommand")
            for flag in arguments.dropFirst() where flag.hasPrefix("--") {
                XCTAssertTrue(
                    text.contains(flag.split(separator: "=")[0] + " "),
                    "overlays/\(overlay): \(what) passes \(flag), which `shiftwork \(subcommand) --help` does not list")
            }
        }
        for overlay in try KubernetesManifests.overlays() {
            let manifests = try await KubernetesManifests.render(overlay, scratch: scratch)
            for (kind, name, containerName) in [
                ("StatefulSet", coordinatorName, "coordinator"), ("Deployment", workerName, "worker"),
            ] {
                let container = try manifests.container(kind, name, containerName)
                // The image's ENTRYPOINT is `tini -- shiftwork`: a container sets only args (a subcommand), or, for
                // the coordinator pair, the shell in front of it that takes the role from the ordinal and `exec`s
                // `shiftwork "$@"` with those args under tini.
                let script = podRoleScript(container)
                XCTAssertTrue(
                    container.command.isEmpty || script != nil,
                    "overlays/\(overlay): \(containerName) replaces the image's entrypoint: \(container.command)")
                try await check(container.args, in: overlay, of: "the \(containerName) container")
                // The container's variables are seen by its subcommand and by the commands its exec probes run.
                // `shiftwork status` run in the coordinator's container (`kubectl exec`, docs/deployment.md) reads its
                // variables too: SHIFTWORK_COORDINATOR_KEY with CurveZMQ.
                var readers = [container.args.first ?? ""] + (containerName == "coordinator" ? ["status"] : [])
                for probeKind in ["readinessProbe", "livenessProbe", "startupProbe"] {
                    guard let command = container.probe(probeKind)?.at("exec", "command") as? [String] else { continue }
                    XCTAssertEqual(
                        command.first, "shiftwork",
                        "overlays/\(overlay): \(containerName) \(probeKind) runs \(command.first ?? "nothing")")
                    try await check(Array(command.dropFirst()), in: overlay, of: "the \(containerName) \(probeKind)")
                    readers.append(command.dropFirst().first ?? "")
                }
                var texts: [String] = []
                for reader in readers { texts.append(try await help(reader)) }
                for variable in container.variableNames where !variable.hasPrefix("SHIFTWORK_") {
                    // Not the program's: the role script's input.
                    XCTAssertTrue(
                        script?.contains("$\(variable)") == true,
                        "overlays/\(overlay): \(containerName) sets \(variable), which neither shiftwork nor its script reads"
                    )
                }
                for variable in container.variableNames + (script.map(exportedVariables) ?? [])
                where variable.hasPrefix("SHIFTWORK_") {
                    XCTAssertTrue(
                        texts.contains { $0.range(of: "\(variable)[^A-Z0-9_]", options: .regularExpression) != nil },
                        "overlays/\(overlay): \(containerName) sets \(variable), which no `shiftwork \(readers.joined(separator: "/")) --help` mentions"
                    )
                }
            }
        }
    }

    // MARK: What the objects must agree on

    func testPortsProbesGracePeriodAndDataVolumeAgree() async throws {
        let manifests = try await KubernetesManifests.render("dev", scratch: scratch)
        let coordinator = try manifests.container("StatefulSet", coordinatorName, "coordinator")
        let worker = try manifests.container("Deployment", workerName, "worker")
        let statefulSet = try manifests.object("StatefulSet", coordinatorName)
        XCTAssertEqual(statefulSet.at("spec", "replicas") as? Int, 2, "a pair of coordinators: primary and backup")
        XCTAssertEqual(
            statefulSet.at("spec", "podManagementPolicy") as? String, "Parallel",
            "both pods start at once: a restarted primary waits for its backup, which OrderedReady would not start")
        let antiAffinity = try XCTUnwrap(
            statefulSet.at(
                "spec", "template", "spec", "affinity", "podAntiAffinity",
                "requiredDuringSchedulingIgnoredDuringExecution")
                as? [[String: Any]], "the pair's pods need a required anti-affinity")
        XCTAssertEqual(
            antiAffinity.first?["topologyKey"] as? String, "kubernetes.io/hostname", "one node per coordinator")
        let script = try XCTUnwrap(podRoleScript(coordinator), "the coordinator's role comes from its ordinal")
        XCTAssertTrue(script.contains("*-0) role=primary") && script.contains("*-1) role=backup"), script)

        // The coordinator listens on every interface, on the port its Service forwards, as does its metrics server.
        let listen = try XCTUnwrap(coordinator.environment["SHIFTWORK_LISTEN"])
        let listenPort = try XCTUnwrap(
            Int(try XCTUnwrap(listen.wholeMatch(of: #/tcp://(?:0\.0\.0\.0|\*):([0-9]+)/#)).output.1))
        let metricsPort = try XCTUnwrap(
            Int(
                try XCTUnwrap(
                    coordinator.environment["SHIFTWORK_METRICS_LISTEN"]?
                        .wholeMatch(of: #/(?:0\.0\.0\.0|\*):([0-9]+)/#)
                ).output.1))
        let governing = try XCTUnwrap(statefulSet.at("spec", "serviceName") as? String)
        let service = try manifests.object("Service", governing)
        XCTAssertEqual(
            service.at("spec", "publishNotReadyAddresses") as? Bool, true,
            "the pods' names must resolve before they are ready: the pair and the workers find a starting coordinator")
        XCTAssertThrowsError(
            try manifests.object("Service", coordinatorName),
            "no ClusterIP Service for ZeroMQ: it would spread connections over the active and the passive coordinator")
        let servicePorts = service.at("spec", "ports") as? [[String: Any]] ?? []
        let forwarded = Dictionary(
            servicePorts.map { ($0["port"] as? Int ?? 0, coordinator.port($0["targetPort"]) ?? -1) }
        ) { a, _ in a }
        XCTAssertEqual(
            forwarded[listenPort], listenPort, "the Service must forward \(listenPort) to the coordinator's ZeroMQ port"
        )
        XCTAssertEqual(
            forwarded[metricsPort], metricsPort, "the Service must forward \(metricsPort) to the metrics port")
        let selector = service.at("spec", "selector") as? [String: String] ?? [:]
        let podLabels = statefulSet.at("spec", "template", "metadata", "labels") as? [String: String] ?? [:]
        XCTAssertFalse(selector.isEmpty)
        XCTAssertTrue(
            selector.allSatisfy { podLabels[$0.key] == $0.value },
            "the Service's selector \(selector) does not match the coordinator's pod \(podLabels)")
        XCTAssertEqual(
            service.at("spec", "clusterIP") as? String, "None",
            "the StatefulSet's serviceName must be a headless Service")
        XCTAssertEqual(
            worker.environment["SHIFTWORK_COORDINATOR"],
            (0..<2).map { "tcp://\(coordinatorName)-\($0).\(governing):\(listenPort)" }.joined(separator: ","),
            "workers name both pods of the pair")
        XCTAssertEqual(coordinator.environment["PAIR_SERVICE"], governing, "the peer's name is under \(governing)")

        // The journal on the StatefulSet's claim.
        let dataDirectory = try XCTUnwrap(coordinator.environment["SHIFTWORK_DATA_DIR"])
        let dataMount = try XCTUnwrap(
            coordinator.mount(holding: dataDirectory), "SHIFTWORK_DATA_DIR=\(dataDirectory) is on no volume")
        XCTAssertFalse(dataMount.readOnly)
        let claims = (statefulSet.at("spec", "volumeClaimTemplates") as? [[String: Any]] ?? []).map(\.name)
        XCTAssertTrue(
            claims.contains(dataMount.volume),
            "the data directory's volume \(dataMount.volume) is not a volumeClaimTemplate (\(claims))")

        // Workers: probes on the health endpoint, a grace period longer than the drain.
        let health = try XCTUnwrap(worker.environment["SHIFTWORK_HEALTH_LISTEN"])
        let healthPort = try XCTUnwrap(
            Int(try XCTUnwrap(health.wholeMatch(of: #/(?:0\.0\.0\.0|\*):([0-9]+)/#)).output.1))
        for (kind, path) in [("readinessProbe", "/readyz"), ("livenessProbe", "/livez")] {
            let probe = try XCTUnwrap(worker.probe(kind)?["httpGet"] as? [String: Any], "worker: no HTTP \(kind)")
            XCTAssertEqual(probe["path"] as? String, path, "worker \(kind)")
            XCTAssertEqual(
                worker.port(probe["port"]), healthPort, "worker \(kind) must probe SHIFTWORK_HEALTH_LISTEN's port")
        }
        let drain = try XCTUnwrap(Int(worker.environment["SHIFTWORK_DRAIN_TIMEOUT"] ?? "60"))
        let grace = try XCTUnwrap(
            worker.podSpec["terminationGracePeriodSeconds"] as? Int, "worker: no terminationGracePeriodSeconds")
        XCTAssertGreaterThanOrEqual(
            grace, drain + 5,
            "worker: terminationGracePeriodSeconds (\(grace)) must exceed the drain timeout (\(drain) s), or draining workers are killed"
        )
        XCTAssertGreaterThan(worker.podSpec["terminationGracePeriodSeconds"] as? Int ?? 0, 0)
        let coordinatorGrace = try XCTUnwrap(coordinator.podSpec["terminationGracePeriodSeconds"] as? Int)
        XCTAssertGreaterThan(coordinatorGrace, 10, "the coordinator's graceful shutdown takes up to 10 s")
        // Compute threads from the container's CPU limit (the slots default to twice that), the worker's ID
        // from the pod's name.
        XCTAssertEqual(
            worker.source(of: "SHIFTWORK_COMPUTE_THREADS")?.at("resourceFieldRef", "resource") as? String, "limits.cpu")
        XCTAssertNotNil(
            worker.definition.at("resources", "limits", "cpu"),
            "worker: SHIFTWORK_COMPUTE_THREADS comes from limits.cpu, which is not set")
        XCTAssertTrue(
            worker.source(of: "SHIFTWORK_SLOTS") == nil && worker.environment["SHIFTWORK_SLOTS"] == nil,
            "worker: the slots follow the compute threads unless set")
        XCTAssertEqual(
            worker.source(of: "SHIFTWORK_WORKER_ID")?.at("fieldRef", "fieldPath") as? String, "metadata.name")
    }

    func testCurveOverlayTakesKeysFromSecretsAndMountsOnlyWhatEachNeeds() async throws {
        let manifests = try await KubernetesManifests.render("curve", scratch: scratch)
        let coordinator = try manifests.container("StatefulSet", coordinatorName, "coordinator")
        let worker = try manifests.container("Deployment", workerName, "worker")
        XCTAssertEqual(
            coordinator.environment["SHIFTWORK_INSECURE"] ?? "", "", "the curve overlay must clear SHIFTWORK_INSECURE")
        for (container, variables) in [
            (coordinator, ["SHIFTWORK_SECRET_KEY", "SHIFTWORK_ALLOW_KEYS", "SHIFTWORK_COORDINATOR_KEY"]),
            (worker, ["SHIFTWORK_SECRET_KEY", "SHIFTWORK_COORDINATOR_KEY"]),
        ] {
            for variable in variables {
                let path = try XCTUnwrap(container.environment[variable], "\(container.name): \(variable) is not set")
                let mount = try XCTUnwrap(
                    container.mount(holding: path), "\(container.name): \(variable)=\(path) is on no volume")
                XCTAssertTrue(mount.readOnly, "\(container.name): keys must be mounted read-only (\(path))")
            }
        }
        let secretKey = try XCTUnwrap(coordinator.mount(holding: coordinator.environment["SHIFTWORK_SECRET_KEY"] ?? ""))
        XCTAssertNotNil(
            coordinator.volume(secretKey.volume)?["secret"], "the coordinator's secret key must come from a Secret")
        // A worker's volume projects only its own secret key and the coordinator's public key.
        let workerKeys = try XCTUnwrap(worker.mount(holding: worker.environment["SHIFTWORK_SECRET_KEY"] ?? ""))
        let sources = worker.volume(workerKeys.volume)?.at("projected", "sources") as? [[String: Any]] ?? []
        let paths = sources.flatMap { source in
            source.values.compactMap { ($0 as? [String: Any])?["items"] as? [[String: Any]] }.flatMap {
                $0.compactMap { $0["path"] as? String }
            }
        }
        XCTAssertEqual(Set(paths), ["worker.key", "coordinator.pub"], "worker: mounts \(paths)")
        XCTAssertTrue(sources.contains { $0["secret"] != nil }, "worker: its secret key must come from a Secret")
    }

    func testSharedSinkMountsOneReadWriteManyClaimInEveryWorker() async throws {
        let manifests = try await KubernetesManifests.render("shared-sink", scratch: scratch)
        let worker = try manifests.container("Deployment", workerName, "worker")
        let claims = manifests.objects("PersistentVolumeClaim")
        let claim = try XCTUnwrap(claims.first, "no PersistentVolumeClaim for the sink")
        XCTAssertEqual(
            claim.at("spec", "accessModes") as? [String], ["ReadWriteMany"], "every worker writes to the sink at once")
        let mounted = worker.mounts.first {
            worker.volume($0.volume)?.at("persistentVolumeClaim", "claimName") as? String == claim.name
        }
        let mount = try XCTUnwrap(mounted, "the workers do not mount \(claim.name)")
        XCTAssertFalse(mount.readOnly)
        XCTAssertEqual(mount.path, "/srv/shiftwork/outputs", "docs/deployment.md names this path for `submit --sink`")
    }

    func testAutoscalersScaleTheWorkersOnMetricsTheCoordinatorExports() async throws {
        // The metric names a real coordinator serves.
        let coordinator = try launch(
            "coordinator",
            [
                "coordinator", "--listen", "tcp://127.0.0.1:*", "--insecure",
                "--metrics-listen", "127.0.0.1:0",
            ])
        let line = await coordinator.waitForLine { $0.contains("metrics on http://") }
        let url = try XCTUnwrap(
            line?.components(separatedBy: "metrics on ").last?.trimmingCharacters(in: .whitespaces),
            "the coordinator did not serve metrics:\n\(coordinator.outputText)")
        let page = try await TestHTTPClient.get(url).text
        let exported = Set(
            page.split(separator: "\n").filter { !$0.hasPrefix("#") }.compactMap {
                $0.split(separator: " ").first.map(String.init)
            })

        let keda = try await KubernetesManifests.render("keda", scratch: scratch)
        let scaledObject = try XCTUnwrap(keda.objects("ScaledObject").first, "overlays/keda has no ScaledObject")
        XCTAssertEqual(scaledObject.at("spec", "scaleTargetRef", "name") as? String, workerName)
        XCTAssertEqual(scaledObject.at("spec", "scaleTargetRef", "kind") as? String, "Deployment")
        _ = try keda.object("Deployment", workerName)
        let triggers = scaledObject.at("spec", "triggers") as? [[String: Any]] ?? []
        let prometheus = try XCTUnwrap(
            triggers.first { $0["type"] as? String == "prometheus" }, "no prometheus trigger")
        let query = try XCTUnwrap(prometheus.at("metadata", "query") as? String)
        let names = query.matches(of: #/shiftwork_[a-z_]+/#).map { String($0.output) }
        XCTAssertTrue(names.contains("shiftwork_tasks_queued"), "the trigger must read the queue depth: \(query)")
        for name in names {
            XCTAssertTrue(
                exported.contains(name),
                "the query reads \(name), which the coordinator does not export (\(exported.sorted()))")
        }
        XCTAssertNotNil(
            Double(prometheus.at("metadata", "threshold") as? String ?? ""),
            "the trigger's threshold must be a number (as a string)")

        let hpa = try await KubernetesManifests.render("hpa", scratch: scratch)
        let autoscaler = try hpa.object("HorizontalPodAutoscaler", workerName)
        XCTAssertEqual(autoscaler.at("spec", "scaleTargetRef", "name") as? String, workerName)
        let metrics = autoscaler.at("spec", "metrics") as? [[String: Any]] ?? []
        let external = try XCTUnwrap(metrics.first?.at("external", "metric", "name") as? String)
        XCTAssertTrue(exported.contains(external), "the HPA reads \(external), which the coordinator does not export")
    }

    // MARK: Running the dev overlay

    func testDevOverlayRunsAsLocalProcessesWithItsProbes() async throws {
        let manifests = try await KubernetesManifests.render("dev", scratch: scratch)
        let coordinatorContainer = try manifests.container("StatefulSet", coordinatorName, "coordinator")
        let workerContainer = try manifests.container("Deployment", workerName, "worker")
        let zmqPort = try freeLoopbackPort()
        let metricsPort = try freeLoopbackPort()
        let endpoint = "tcp://127.0.0.1:\(zmqPort)"
        // The pod's addresses mapped onto loopback, its volume onto a scratch folder.
        func localEnvironment(
            _ container: KubernetesContainer, pod: String, healthPort: Int = 0
        ) throws -> [String: String] {
            var environment: [String: String] = [:]
            for (name, value) in container.environment {
                environment[name] =
                    value
                    .replacingOccurrences(of: "tcp://0.0.0.0:5570", with: endpoint)
                    .replacingOccurrences(of: "tcp://*:5570", with: endpoint)
                    .replacingOccurrences(of: "tcp://\(coordinatorName)-0.\(coordinatorName)-pods:5570", with: endpoint)
                    .replacingOccurrences(of: "tcp://\(coordinatorName)-1.\(coordinatorName)-pods:5570", with: endpoint)
                    .replacingOccurrences(of: "*:9464", with: "127.0.0.1:\(metricsPort)")
                    .replacingOccurrences(of: "*:8080", with: "127.0.0.1:\(healthPort)")
                if name == "SHIFTWORK_DATA_DIR" { environment[name] = scratch.appendingPathComponent("data").path }
            }
            for name in container.variableNames where environment[name] == nil {
                // valueFrom: the pod's name, or the CPU limit (rounded up, as the kubelet does with divisor 1).
                if container.source(of: name)?["fieldRef"] != nil { environment[name] = pod }
                if container.source(of: name)?["resourceFieldRef"] != nil {
                    let limit = container.definition.at("resources", "limits", "cpu") as? String ?? "1"
                    environment[name] = String(Int((Double(limit) ?? 1).rounded(.up)))
                }
            }
            return environment
        }

        // A worker whose coordinator is not up yet: alive, not ready.
        let healthPorts = [try freeLoopbackPort(), try freeLoopbackPort()]
        var workers: [ManagedProcess] = []
        for (index, port) in healthPorts.enumerated() {
            let pod = "\(workerName)-7d9f8-\(index)"
            workers.append(
                try launch(
                    pod, workerContainer.args,
                    environment: try localEnvironment(workerContainer, pod: pod, healthPort: port)))
        }
        for (index, port) in healthPorts.enumerated() {
            let live = try await pollHTTP("http://127.0.0.1:\(port)/livez") { $0.status == 200 }
            XCTAssertEqual(live?.status, 200, "worker \(index): /livez\n\(allOutput)")
            let ready = try await TestHTTPClient.get("http://127.0.0.1:\(port)/readyz")
            XCTAssertEqual(ready.status, 503, "worker \(index) is ready without a coordinator: \(ready.text)")
            XCTAssertTrue(ready.text.contains("not registered"), ready.text)
        }

        // The coordinator; its readiness and liveness probes (HTTP), as the kubelet runs them.
        let coordinator = try launch(
            "\(coordinatorName)-0", coordinatorContainer.args,
            environment: try localEnvironment(coordinatorContainer, pod: "\(coordinatorName)-0"))
        // Readiness and liveness are HTTP probes of the metrics port (a passive coordinator of the pair refuses
        // `status`, and must be ready as a backup).
        for kind in ["readinessProbe", "livenessProbe"] {
            let path = try XCTUnwrap(
                coordinatorContainer.probe(kind)?.at("httpGet", "path") as? String, "coordinator: \(kind) is not HTTP")
            XCTAssertEqual(
                coordinatorContainer.port(coordinatorContainer.probe(kind)?.at("httpGet", "port")), 9464,
                "coordinator: \(kind) must probe the metrics port")
            let answer = try await pollHTTP("http://127.0.0.1:\(metricsPort)\(path)") { $0.status == 200 }
            XCTAssertEqual(answer?.status, 200, "the coordinator's \(kind)\n\(allOutput)")
        }

        // Both workers register by themselves and become ready.
        for (index, port) in healthPorts.enumerated() {
            let ready = try await pollHTTP("http://127.0.0.1:\(port)/readyz") { $0.status == 200 }
            XCTAssertEqual(ready?.status, 200, "worker \(index) never became ready: \(ready?.text ?? "")\n\(allOutput)")
            XCTAssertTrue(ready?.text.contains("ready: registered") == true, ready?.text ?? "")
        }

        // Scale-down: SIGTERM, a goodbye, exit 0 within terminationGracePeriodSeconds.
        let grace = workerContainer.podSpec["terminationGracePeriodSeconds"] as? Int ?? 30
        kill(workers[0].pid, SIGTERM)
        let status = await workers[0].waitForExit(timeout: .seconds(grace))
        XCTAssertEqual(
            status, 0, "the worker did not exit cleanly within \(grace) s of SIGTERM:\n\(workers[0].outputText)")
        let left = await coordinator.waitForLine(timeout: .seconds(10)) { $0.contains("worker left") }
        XCTAssertNotNil(left, "the coordinator did not see the worker leave:\n\(coordinator.outputText)")
        let other = try await TestHTTPClient.get("http://127.0.0.1:\(healthPorts[1])/readyz")
        XCTAssertEqual(other.status, 200, "the other worker: \(other.text)")
    }

    /// The shell script a coordinator pod runs in front of `shiftwork` to take its role from its ordinal:
    /// `command` is `tini -- /bin/sh -c SCRIPT NAME`, and the script ends by `exec`ing `shiftwork "$@"` (the args).
    private func podRoleScript(_ container: KubernetesContainer) -> String? {
        let command = container.command
        guard command.count == 6, command[0] == "/usr/bin/tini", command[1] == "--", command[2] == "/bin/sh",
            command[3] == "-c", command[4].contains("exec shiftwork \"$@\"")
        else { return nil }
        return command[4]
    }

    /// The `SHIFTWORK_*` variables a script exports (`export A=… B=…`).
    private func exportedVariables(_ script: String) -> [String] {
        script.matches(of: #/(SHIFTWORK_[A-Z0-9_]+)=/#).map { String($0.output.1) }
    }

    /// GETs `url` until `done` holds (or 30 s pass); returns the last response (nil: never answered).
    private func pollHTTP(
        _ url: String, until done: (TestHTTPClient.Response) -> Bool
    ) async throws -> TestHTTPClient.Response? {
        let deadline = ContinuousClock.now + .seconds(30)
        var last: TestHTTPClient.Response?
        while ContinuousClock.now < deadline {
            if let response = try? await TestHTTPClient.get(url) {
                last = response
                if done(response) { return response }
            }
            try await Task.sleep(for: .milliseconds(200))
        }
        return last
    }
}
