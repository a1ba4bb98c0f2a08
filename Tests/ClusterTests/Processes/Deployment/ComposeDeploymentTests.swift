import Foundation
import ShiftworkTestSupport
import XCTest

#if canImport(Glibc)
import Glibc
#endif

/// compose.yaml without Docker (no engine exists where the tests run): the file is read with PyYAML,
/// and each service's `command` runs as a local process of the `shiftwork` binary (the image's
/// ENTRYPOINT) with the service's `environment`; service names become 127.0.0.1 and container ports
/// free loopback ports. The checks of what `docker compose up --scale worker=N` relies on are in
/// `testComposeFileSupportsScalingWorkers`; compose.yaml runs a coordinator pair (coordinator-a the primary,
/// coordinator-b the backup: `ComposePairFileTests` checks how they fit), compose.single.yaml one coordinator.
final class ComposeDeploymentTests: DeploymentTestCase {
    /// What `docker compose up --scale worker=3` would start.
    private let replicas = ["worker": 3]
    /// The coordinator the workers wait for and the host reaches first: the pair's primary, or the single one.
    private let coordinatorName = "coordinator-a"

    // MARK: The file itself

    func testComposeFileSupportsScalingWorkers() async throws {
        let compose = try await ComposeFile.load()
        let coordinator = try compose.service(coordinatorName)
        let worker = try compose.service("worker")

        // `--scale` creates containers named after the project; a fixed name or host port collides.
        XCTAssertNil(worker.definition["container_name"], "worker: a container_name makes `--scale worker=N` fail")
        XCTAssertTrue(worker.ports.isEmpty, "worker: published ports make `--scale worker=N` fail: \(worker.ports)")
        XCTAssertEqual(
            worker.dependsOn[coordinatorName], "service_healthy",
            "worker: must wait for the primary coordinator's health check (depends_on.coordinator-a.condition)")
        XCTAssertNotNil(coordinator.healthcheck, "coordinator: workers wait for a health check it does not have")

        // Graceful stop: the signal must be one the CLI handles, and the grace period must be stated.
        for service in [coordinator, worker] {
            XCTAssertTrue(
                ["SIGTERM", "SIGINT"].contains(service.string("stop_signal") ?? ""),
                "\(service.name): stop_signal must be SIGTERM or SIGINT (the signals shiftwork handles), not \(service.string("stop_signal") ?? "missing")"
            )
            let grace = try service.duration("stop_grace_period")
            XCTAssertNotNil(grace, "\(service.name): stop_grace_period is missing")
            XCTAssertGreaterThan(grace ?? .zero, .zero, "\(service.name): stop_grace_period")
        }

        // A worker that drains on SIGTERM must be done (and have said goodbye) before Docker's SIGKILL.
        let (helpStatus, help) = try await runToCompletion("worker --help", ShiftworkBinary.url, ["worker", "--help"])
        XCTAssertEqual(helpStatus, 0, help)
        let flatHelp = help.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        if let drainDefault = flatHelp.firstMatch(of: try Regex(#"SHIFTWORK_DRAIN_TIMEOUT; default ([0-9]+)"#)) {
            let configured = worker.environment["SHIFTWORK_DRAIN_TIMEOUT"]
            let drain = try XCTUnwrap(
                Int(configured ?? String(drainDefault.output[1].substring ?? "")),
                "worker: SHIFTWORK_DRAIN_TIMEOUT=\(configured ?? "") is not a number of seconds")
            let grace = try worker.duration("stop_grace_period") ?? .seconds(10)
            XCTAssertLessThan(
                Duration.seconds(drain), grace,
                "worker: its drain timeout (\(drain) s) must be shorter than stop_grace_period (\(grace)), or Docker kills draining workers"
            )
        }

        // One image, built from this repository's Dockerfile, runs both services.
        let image = try XCTUnwrap(coordinator.string("image"), "coordinator: no image name to share with the workers")
        let build = try XCTUnwrap(coordinator.definition["build"], "coordinator: no build section")
        let context = (build as? String) ?? ((build as? [String: Any])?["context"] as? String) ?? ""
        let dockerfileName = ((build as? [String: Any])?["dockerfile"] as? String) ?? "Dockerfile"
        XCTAssertEqual(
            URL(fileURLWithPath: context, relativeTo: Repository.root).standardizedFileURL.path,
            Repository.root.standardizedFileURL.path, "coordinator: build context must be the repository")
        XCTAssertEqual(dockerfileName, "Dockerfile")
        XCTAssertTrue(
            worker.definition["build"] != nil || worker.string("image") == image,
            "worker: must use the coordinator's image \(image) (or build it), not \(worker.string("image") ?? "none")")

        // Endpoints: the coordinator listens on every interface of its container, on the port it
        // publishes and workers connect to by service name.
        let listen = try XCTUnwrap(
            coordinator.environment["SHIFTWORK_LISTEN"], "coordinator: SHIFTWORK_LISTEN is not set")
        let listenMatch = try XCTUnwrap(
            listen.wholeMatch(of: try Regex(#"tcp://(0\.0\.0\.0|\*):([0-9]+)"#)),
            "coordinator: SHIFTWORK_LISTEN=\(listen) must listen on tcp://*:PORT (or tcp://0.0.0.0:PORT), or other containers cannot reach it"
        )
        let port = try XCTUnwrap(Int(listenMatch.output[2].substring ?? ""))
        XCTAssertEqual(
            coordinator.ports.map(\.target), [port], "coordinator: must publish exactly its listen port \(port)")
        XCTAssertNotNil(
            coordinator.ports.first?.published,
            "coordinator: the port must be published for `shiftwork submit` from the host")
        XCTAssertEqual(
            worker.environment["SHIFTWORK_COORDINATOR"], "tcp://coordinator-a:\(port),tcp://coordinator-b:\(port)",
            "workers name both coordinators of the pair")
        // The coordinator's journal lives in a named volume, so that a restarted container loses nothing.
        let dataDirectory = try XCTUnwrap(
            coordinator.environment["SHIFTWORK_DATA_DIR"], "coordinator: SHIFTWORK_DATA_DIR is not set")
        let dataMount = coordinator.volumes.first {
            dataDirectory == $0.target || dataDirectory.hasPrefix($0.target + "/")
        }
        XCTAssertEqual(
            dataMount.map { !$0.isBindMount && !$0.readOnly }, true,
            "coordinator: \(dataDirectory) must be on a writable named volume")
        // The health check asks the coordinator in its own container, and passes for the passive one of a pair too
        // (its refusal names it so), or a compose `up` after a failover would wait for ever on coordinator-a.
        let check = coordinator.healthcheck ?? []
        XCTAssertEqual(check.first, "CMD-SHELL", "coordinator: health check \(check)")
        let command = check.dropFirst().joined(separator: " ")
        XCTAssertTrue(
            command.hasPrefix("shiftwork status --coordinator tcp://127.0.0.1:\(port) "),
            "coordinator: health check must ask the coordinator in its own container: \(check)")
        XCTAssertTrue(command.contains("is the passive one"), "coordinator: a passive coordinator is healthy: \(check)")

        // The Dockerfile builds the `shiftwork` product and runs it under tini (which forwards SIGTERM).
        let dockerfile = try Repository.text(dockerfileName)
        let package = try Repository.text("Package.swift")
        XCTAssertTrue(
            package.contains(#".executable(name: "shiftwork""#), "Package.swift has no `shiftwork` executable product")
        XCTAssertTrue(
            dockerfile.contains("swift build -c release --product shiftwork"),
            "the Dockerfile does not build the shiftwork product")
        let entrypoint = try dockerEntrypoint(dockerfile)
        XCTAssertTrue(
            entrypoint.first?.hasSuffix("/tini") == true && entrypoint.dropFirst().first == "--",
            "ENTRYPOINT \(entrypoint) must start with tini --, so that stop signals reach shiftwork")
        let binary = try XCTUnwrap(entrypoint.last)
        XCTAssertEqual((binary as NSString).lastPathComponent, "shiftwork")
        XCTAssertTrue(
            dockerfile.contains("COPY --from=build /out/shiftwork \(binary)"),
            "the image does not install the built binary at \(binary)")
        XCTAssertTrue(dockerfile.range(of: "EXPOSE \(port)") != nil, "the Dockerfile does not EXPOSE \(port)")

        // Every directory the package manifest needs is copied into the build stage and not ignored.
        let copied = dockerfile.split(separator: "\n").filter { $0.hasPrefix("COPY ") && !$0.contains("--from") }
            .flatMap { $0.split(separator: " ").dropFirst().dropLast().map(String.init) }
        let ignored = Set(
            try Repository.text(".dockerignore").split(separator: "\n").map {
                $0.trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "/"))
            })
        let pathPattern = try Regex(#"path: "([^/"]+)"#)
        let needed = Set(
            ["Package.swift", "Sources", "Tests"]
                + package.matches(of: pathPattern).compactMap { $0.output[1].substring.map(String.init) })
        for directory in needed.sorted() {
            // Tests/ may instead be made of the test targets' empty folders (the image's build reads none of their
            // files, and a test's change then rebuilds nothing); scripts/test-containers builds the image for real.
            if directory == "Tests", !copied.contains(directory),
                dockerfile.contains("Package.swift") && dockerfile.contains("| xargs mkdir -p")
            {
                continue
            }
            XCTAssertTrue(
                copied.contains(directory),
                "the Dockerfile's build stage does not COPY \(directory), which Package.swift needs")
            XCTAssertFalse(
                ignored.contains(directory), ".dockerignore excludes \(directory), which Package.swift needs")
        }
    }

    // MARK: Running it

    func testComposeServicesRunAsLocalProcessesWithThreeWorkers() async throws {
        try await runServices(of: try await ComposeFile.load(), keys: nil)
    }

    func testComposeSingleCoordinatorRunsAsLocalProcessesWithThreeWorkers() async throws {
        let compose = try await ComposeFile.load("compose.yaml", "compose.single.yaml")
        XCTAssertEqual(try compose.service("coordinator-b").replicaCount(), 0, "compose.single.yaml: no coordinator-b")
        try await runServices(of: compose, keys: nil)
        XCTAssertFalse(processes.contains { $0.name == "coordinator-b" }, "compose.single.yaml started coordinator-b")
    }

    // MARK: CurveZMQ: compose.curve.yaml

    func testCurveOverrideMountsOnlyTheKeysEachServiceNeedsReadOnly() async throws {
        let plain = try await ComposeFile.load()
        XCTAssertEqual(
            try plain.service(coordinatorName).environment["SHIFTWORK_INSECURE"], "1",
            "compose.yaml alone runs without keys, and must say so (SHIFTWORK_INSECURE)")
        let compose = try await ComposeFile.load("compose.yaml", "compose.curve.yaml")
        let coordinators = try ["coordinator-a", "coordinator-b"].map { try compose.service($0) }
        let worker = try compose.service("worker")
        for coordinator in coordinators {
            XCTAssertEqual(
                coordinator.environment["SHIFTWORK_INSECURE"] ?? "", "",
                "compose.curve.yaml must clear SHIFTWORK_INSECURE (\(coordinator.name))")
        }
        let needed =
            coordinators.map { ($0, ["SHIFTWORK_SECRET_KEY", "SHIFTWORK_ALLOW_KEYS", "SHIFTWORK_COORDINATOR_KEY"]) }
            + [(worker, ["SHIFTWORK_SECRET_KEY", "SHIFTWORK_COORDINATOR_KEY"])]
        for (service, variables) in needed {
            for variable in variables {
                let path = try XCTUnwrap(service.environment[variable], "\(service.name): \(variable) is not set")
                let mount = service.volumes.first { path == $0.target || path.hasPrefix($0.target + "/") }
                XCTAssertNotNil(mount, "\(service.name): \(variable)=\(path) is not inside any mounted volume")
                XCTAssertEqual(mount?.readOnly, true, "\(service.name): keys must be mounted read-only (\(path))")
            }
        }
        // A worker holds its own secret and the coordinator's public key, never the coordinator's secret.
        for mount in worker.volumes where mount.isBindMount {
            XCTAssertTrue(
                mount.source.hasSuffix(".pub") || mount.source.hasSuffix("worker.key"),
                "worker: mounts \(mount.source), more than its own key and the coordinator's public key")
        }
        let ignored = try Repository.text(".dockerignore").split(separator: "\n").map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        XCTAssertTrue(
            ignored.contains("keys") || ignored.contains("keys/"), ".dockerignore must keep keys/ out of the image")
    }

    func testComposeServicesWithCurveRunAsLocalProcesses() async throws {
        let compose = try await ComposeFile.load("compose.yaml", "compose.curve.yaml")
        // The keys, made as docs/deployment.md says (in the test's scratch directory instead of ./keys).
        let keys = scratch.appendingPathComponent("keys")
        for name in ["coordinator", "worker", "client"] {
            let (status, output) = try await runToCompletion(
                "keygen \(name)", ShiftworkBinary.url, ["keygen", name, "--out", keys.path])
            XCTAssertEqual(status, 0, output)
        }
        try await runServices(of: compose, keys: keys)
        for name in ["coordinator-a", "coordinator-b"] {
            let coordinator = try XCTUnwrap(processes.first { $0.name == name })
            XCTAssertTrue(coordinator.outputText.contains("CurveZMQ on: public key"), coordinator.outputText)
        }
    }

    // MARK: Running services

    /// Runs every service of `compose` as local processes (the workers scaled to `replicas`), submits a
    /// batch from "the host", runs the health check, and stops everything as `docker compose stop` does.
    /// With `keys`, bind mounts of `./keys` are that directory, and the client uses its `client` pair.
    private func runServices(of compose: ComposeFile, keys: URL?) async throws {
        let program = try
            (dockerEntrypoint(try Repository.text("Dockerfile")).last.map { ($0 as NSString).lastPathComponent })
        XCTAssertEqual(
            program, "shiftwork",
            "the image's entrypoint is not shiftwork; this test runs services as shiftwork processes")
        var network = LoopbackNetwork(serviceNames: compose.services.keys)
        var started: [(service: ComposeService, processes: [ManagedProcess])] = []

        // Start in dependency order, honouring `condition: service_healthy` as compose does.
        for name in try compose.startOrder() {
            let service = try compose.service(name)
            for (dependency, condition) in service.dependsOn.sorted(by: { $0.key < $1.key })
            where condition == "service_healthy" {
                try await waitUntilHealthy(try compose.service(dependency), network: &network, keys: keys)
            }
            var replicasOfService: [ManagedProcess] = []
            let count = try replicas[name] ?? service.replicaCount()
            guard count > 0 else { continue }  // deploy.replicas 0: compose.single.yaml's coordinator-b
            for replica in 1...count {
                let arguments = try service.command.map { try network.rewrite($0, inside: name) }
                let environment = try containerEnvironment(of: service, network: &network, keys: keys)
                replicasOfService.append(
                    try launch(
                        count == 1 ? name : "\(name)-\(replica)", arguments,
                        environment: environment))
            }
            started.append((service, replicasOfService))
        }

        // "From the host": the coordinators' published ports, the primary's first (it is active on a fresh start,
        // and the status read below is its own).
        let coordinator = try compose.service(coordinatorName)
        let published = try XCTUnwrap(coordinator.ports.first, "the coordinator publishes no port")
        let endpoint = "tcp://127.0.0.1:\(try network.port(of: coordinatorName, containerPort: published.target))"
        var submitEndpoints = [endpoint]
        if started.contains(where: { $0.service.name == "coordinator-b" }) {
            let backup = try compose.service("coordinator-b")
            let backupPort = try XCTUnwrap(backup.ports.first, "coordinator-b publishes no port")
            submitEndpoints.append(
                "tcp://127.0.0.1:\(try network.port(of: "coordinator-b", containerPort: backupPort.target))")
        }
        let workerCount = replicas["worker"] ?? 1
        let clientKeys =
            keys.map {
                [
                    "--secret-key", $0.appendingPathComponent("client.key").path,
                    "--coordinator-key", $0.appendingPathComponent("coordinator.pub").path,
                ]
            } ?? []
        let registered = try await waitForStatus(endpoint, clientKeys) { $0.workers.count == workerCount }
        guard registered?.workers.count == workerCount else {
            throw DeploymentTestError(
                "\(registered?.workers.count ?? 0) of \(workerCount) workers registered with the coordinator:\n\(allOutput)"
            )
        }

        // A batch, submitted with the CLI from the host: at least as many downloads as the workers have
        // slots together (a worker's default is one per core), so that every replica must take part
        // whatever order the coordinator fills them in.
        let images = try serveImages(max(6, workerCount * ProcessInfo.processInfo.activeProcessorCount))
        let out = scratch.appendingPathComponent("out")
        let submit = try launch(
            "submit",
            ["submit"] + images.map(\.url) + [
                "--out", out.path, "--coordinator", submitEndpoints.joined(separator: ","),
            ]
                + clientKeys)
        let submitted = await submit.waitForExit(timeout: .seconds(120))
        guard submitted == 0 else {
            throw DeploymentTestError(
                "submit \(submitted.map { "exited with status \($0)" } ?? "did not finish in 120 s"):\n\(allOutput)")
        }
        XCTAssertTrue(
            submit.outputText.contains("\(images.count) items: \(images.count) succeeded, 0 failed"), submit.outputText)
        for image in images { assertOutput(of: image, in: out, allOutput) }

        // Every replica took part, and the coordinator still answers its health check.
        let after = try await waitForStatus(endpoint, clientKeys) { status in
            status.batches.contains { $0.succeeded == images.count }
        }
        XCTAssertEqual(after?.workers.count, workerCount, allOutput)
        for worker in after?.workers ?? [] {
            XCTAssertGreaterThan(
                worker.completed, 0, "worker \(worker.id) ran no task: scaling did not spread the batch\n\(allOutput)")
        }
        let (health, healthOutput) = try await runHealthcheck(coordinator, network: &network, keys: keys)
        XCTAssertEqual(health, 0, "the coordinator's health check failed:\n\(healthOutput)")

        // Graceful stop, as `docker compose stop` does it: dependents first, each with its stop signal,
        // each expected to exit by itself (status 0) within its stop_grace_period (else Docker kills it).
        for (service, group) in started.reversed() {
            let signalName = service.string("stop_signal") ?? "SIGTERM"
            let number: Int32 =
                switch signalName {
                case "SIGTERM": SIGTERM
                case "SIGINT": SIGINT
                default: throw DeploymentTestError("\(service.name): unsupported stop_signal \(signalName)")
                }
            let grace = try service.duration("stop_grace_period") ?? .seconds(10)
            for process in group { kill(process.pid, number) }
            for process in group {
                let status = await process.waitForExit(timeout: grace)
                XCTAssertNotNil(
                    status,
                    "\(process.name) did not stop within its stop_grace_period \(grace) after \(signalName):\n\(process.outputText)"
                )
                if let status {
                    XCTAssertEqual(
                        status, 0, "\(process.name) did not exit cleanly after \(signalName):\n\(process.outputText)")
                }
            }
            if service.name == "worker",
                let coordinatorProcess = started.first(where: { $0.service.name == coordinatorName })?.processes.first
            {
                // Each worker said goodbye, so its tasks would be requeued at once rather than after a timeout.
                let left = await waitForCount(of: "worker left", in: coordinatorProcess, atLeast: group.count)
                XCTAssertEqual(
                    left, group.count,
                    "the coordinator did not see every worker leave (SHIFTWORK_LOG_LEVEL must be info or lower to log it):\n\(coordinatorProcess.outputText)"
                )
            }
        }
    }

    // MARK: Helpers

    /// The exec-form ENTRYPOINT of the Dockerfile's last stage.
    private func dockerEntrypoint(_ dockerfile: String) throws -> [String] {
        guard let line = dockerfile.split(separator: "\n").last(where: { $0.hasPrefix("ENTRYPOINT ") }),
            let array = try JSONSerialization.jsonObject(with: Data(line.dropFirst("ENTRYPOINT ".count).utf8))
                as? [String]
        else { throw DeploymentTestError("the Dockerfile has no exec-form ENTRYPOINT [\"…\"]") }
        return array
    }

    /// The service's `environment` as its container sees it mapped onto this machine: endpoints onto
    /// loopback ports, and paths inside bind mounts onto the mounted host paths (`./keys` onto `keys`).
    private func containerEnvironment(
        of service: ComposeService, network: inout LoopbackNetwork, keys: URL?
    ) throws -> [String: String] {
        var environment: [String: String] = [:]
        for (key, value) in service.environment {
            environment[key] = hostPath(try network.rewrite(value, inside: service.name), in: service, keys: keys)
        }
        return environment
    }

    /// `path` inside `service`'s container, as a path on this machine when a mount holds it: a bind
    /// mount's host path, or a scratch directory standing for a named volume.
    private func hostPath(_ path: String, in service: ComposeService, keys: URL?) -> String {
        for mount in service.volumes.sorted(by: { $0.target.count > $1.target.count })
        where path == mount.target || path.hasPrefix(mount.target + "/") {
            let rest = path.dropFirst(mount.target.count)
            if !mount.isBindMount {
                let volume = scratch.appendingPathComponent("volume-\(mount.source)", isDirectory: true)
                try? FileManager.default.createDirectory(at: volume, withIntermediateDirectories: true)
                return volume.path + rest
            }
            if let keys, mount.source == "./keys" || mount.source.hasPrefix("./keys/") {
                return keys.path + mount.source.dropFirst("./keys".count) + rest
            }
            return URL(fileURLWithPath: mount.source, relativeTo: Repository.root).standardizedFileURL.path + rest
        }
        return path
    }

    /// Runs `service`'s health check command once, as Docker would inside its container (with its environment).
    private func runHealthcheck(
        _ service: ComposeService, network: inout LoopbackNetwork, keys: URL?
    ) async throws -> (Int32?, String) {
        guard let test = service.healthcheck, let form = test.first else {
            throw DeploymentTestError("\(service.name) has no health check")
        }
        let check = service.definition["healthcheck"] as? [String: Any] ?? [:]
        let timeout = try (check["timeout"] as? String).map(ComposeDuration.parse) ?? .seconds(30)
        let arguments = try test.dropFirst().map { try network.rewrite($0, inside: service.name) }
        let binaryDirectory = ShiftworkBinary.url.deletingLastPathComponent().path
        let environment = try containerEnvironment(of: service, network: &network, keys: keys)
        switch form {
        case "CMD":
            guard let program = arguments.first, (program as NSString).lastPathComponent == "shiftwork" else {
                throw DeploymentTestError(
                    "\(service.name): the health check runs \(arguments.first ?? "nothing"), not shiftwork")
            }
            return try await runToCompletion(
                "\(service.name) health check", ShiftworkBinary.url, Array(arguments.dropFirst()),
                environment: environment, timeout: timeout)
        case "CMD-SHELL":
            let path = "\(binaryDirectory):\(ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")"
            return try await runToCompletion(
                "\(service.name) health check", URL(fileURLWithPath: "/bin/sh"), ["-c"] + arguments,
                environment: environment.merging(["PATH": path]) { $1 }, timeout: timeout)
        default:
            throw DeploymentTestError("\(service.name): unsupported health check form \(form)")
        }
    }

    /// Runs the health check until it succeeds, within compose's budget (start_period + retries × interval).
    private func waitUntilHealthy(_ service: ComposeService, network: inout LoopbackNetwork, keys: URL?) async throws {
        let check = service.definition["healthcheck"] as? [String: Any] ?? [:]
        let interval = try (check["interval"] as? String).map(ComposeDuration.parse) ?? .seconds(30)
        let startPeriod = try (check["start_period"] as? String).map(ComposeDuration.parse) ?? .zero
        let retries = (check["retries"] as? NSNumber)?.intValue ?? 3
        let deadline = ContinuousClock.now + startPeriod + interval * retries
        var last = ""
        while ContinuousClock.now < deadline {
            let (status, output) = try await runHealthcheck(service, network: &network, keys: keys)
            if status == 0 { return }
            last = output
            if processes.contains(where: { !$0.isRunning && $0.name.hasPrefix(service.name) }) { break }
            try await Task.sleep(for: .milliseconds(250))
        }
        throw DeploymentTestError(
            "\(service.name) never became healthy; last health check output:\n\(last)\n\(allOutput)")
    }

    /// Asks `shiftwork status --json` until `done` holds (or 30 s pass); returns the last status.
    private func waitForStatus(
        _ endpoint: String, _ clientKeys: [String], until done: (ClusterStatus) -> Bool
    ) async throws -> ClusterStatus? {
        let deadline = ContinuousClock.now + .seconds(30)
        var last: ClusterStatus?
        while ContinuousClock.now < deadline {
            let (status, output) = try await runToCompletion(
                "status", ShiftworkBinary.url, ["status", "--json", "--coordinator", endpoint] + clientKeys)
            if status == 0 {
                last = try ClusterStatus(json: output)
                if let last, done(last) { return last }
            }
            try await Task.sleep(for: .milliseconds(200))
        }
        return last
    }

    /// Waits (up to 10 s) until `text` occurs `count` times in the output of `process`; returns how often it did.
    private func waitForCount(of text: String, in process: ManagedProcess, atLeast count: Int) async -> Int {
        let deadline = ContinuousClock.now + .seconds(10)
        var seen = 0
        while ContinuousClock.now < deadline {
            seen = process.outputText.components(separatedBy: text).count - 1
            if seen >= count { break }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return seen
    }
}
