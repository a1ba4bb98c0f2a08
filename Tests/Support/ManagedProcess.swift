import Foundation

/// A child process a test starts and is responsible for stopping.
///
/// Standard output and error are captured into a buffer that the test can read or wait on (e.g. for
/// "listening on …"). `stop()` sends SIGTERM, then SIGKILL after a grace period; `deinit` kills a
/// process the test forgot, so no test leaves one behind.
public final class ManagedProcess: @unchecked Sendable {
    // `lock` guards `output`; `process` is configured before launch and only read afterwards.
    private let process = Process()
    private let lock = NSLock()
    private var output = Data()
    /// Whether the output pipe reached its end (every byte the process wrote has been read).
    private var outputEnded = false
    /// Whether the pipe's handler is between taking bytes out of the pipe and appending them to `output`.
    private var handlerReading = false
    /// The read end of the output pipe (its bytes not yet read: `FIONREAD`).
    private let outputDescriptor: Int32
    /// A short name for failure messages.
    public let name: String

    /// Set for every process a test starts, before the test's own `environment` (which may replace it; an
    /// empty value gives a worker its default source policy): the tests' HTTP servers listen on loopback, which
    /// `shiftwork worker` refuses to fetch from unless allowed (docs/deployment.md, "Source policy").
    public static let testEnvironment = ["SHIFTWORK_ALLOW_SOURCE_NETWORKS": "127.0.0.0/8,::1/128"]

    /// Launches `executable` with `arguments`, ``testEnvironment`` and `environment` added to the current
    /// environment.
    public init(
        _ name: String, executable: URL, arguments: [String], environment: [String: String] = [:],
        currentDirectory: URL? = nil
    ) throws {
        self.name = name
        process.executableURL = executable
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        for (key, value) in Self.testEnvironment { env[key] = value }
        for (key, value) in environment { env[key] = value }
        process.environment = env
        if let currentDirectory { process.currentDirectoryURL = currentDirectory }
        let pipe = Pipe()
        outputDescriptor = pipe.fileHandleForReading.fileDescriptor
        process.standardOutput = pipe
        process.standardError = pipe
        pipe.fileHandleForReading.readabilityHandler = { [weak self] handle in
            self?.lock.withLock { self?.handlerReading = true }
            let data = handle.availableData
            guard let self else { return }
            self.lock.lock()
            self.handlerReading = false
            if data.isEmpty {
                self.outputEnded = true
                handle.readabilityHandler = nil
            } else {
                self.output.append(data)
            }
            self.lock.unlock()
        }
        try process.run()
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    /// The process ID.
    public var pid: Int32 { process.processIdentifier }

    /// Whether the process is still running.
    public var isRunning: Bool { process.isRunning }

    /// Everything the process wrote to standard output and error so far.
    public var outputText: String {
        lock.lock()
        defer { lock.unlock() }
        return String(decoding: output, as: UTF8.self)
    }

    /// Waits until the output contains a line matching `predicate`, the process exits, or `timeout`
    /// passes; returns the first matching line.
    public func waitForLine(timeout: Duration = .seconds(30), where predicate: (String) -> Bool) async -> String? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let line = outputText.split(separator: "\n").map(String.init).first(where: predicate) { return line }
            if !process.isRunning { return nil }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return nil
    }

    /// Waits for the process to exit by itself and for its output to be read to the end (a process that
    /// has exited may still have bytes in the pipe); returns its exit status, or nil after `timeout`.
    public func waitForExit(timeout: Duration = .seconds(120)) async -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning {
            if ContinuousClock.now >= deadline { return nil }
            try? await Task.sleep(for: .milliseconds(20))
        }
        await waitForEndOfOutput()
        return process.terminationStatus
    }

    /// Waits (at most two seconds: a child the process left behind may hold the pipe open) until every byte
    /// the exited process wrote has been read: the pipe's end, or, the same for a process that has exited, an
    /// empty pipe that the handler is not reading from. The pipe's end alone is not enough: in about one
    /// `make test` process test in forty (2026-11-28), the test process itself still held the pipe's write end
    /// when its child had exited, so that the end never came and every such wait took its two seconds.
    private func waitForEndOfOutput() async {
        let deadline = ContinuousClock.now + .seconds(2)
        while ContinuousClock.now < deadline {
            if lock.withLock({ outputEnded || (!handlerReading && unreadBytes == 0) }) { return }
            try? await Task.sleep(for: .milliseconds(5))
        }
    }

    /// The bytes in the output pipe that no one has read yet (`FIONREAD`); -1 when that cannot be told.
    private var unreadBytes: Int32 {
        var count: Int32 = -1
        return ioctl(outputDescriptor, UInt(FIONREAD), &count) == 0 ? count : -1
    }

    /// Sends SIGTERM, waits up to `grace` for the process to exit, then SIGKILL. Returns the exit status.
    @discardableResult
    public func stop(grace: Duration = .seconds(5)) async -> Int32 {
        if process.isRunning {
            kill(process.processIdentifier, SIGTERM)
            if await waitForExit(timeout: grace) == nil {
                kill(process.processIdentifier, SIGKILL)
            }
        }
        while process.isRunning { try? await Task.sleep(for: .milliseconds(10)) }
        await waitForEndOfOutput()
        return process.terminationStatus
    }

    /// Stops every one of `processes` at once, as ``stop(grace:)`` does each: SIGTERM to all of them, then
    /// SIGKILL to those still running after `grace`. A test's teardown so waits for the slowest of them, not
    /// for the sum: a worker that drains a task whose download never ends takes the whole grace period, and
    /// stopped one after the other, every such worker added its own.
    public static func stop(_ processes: [ManagedProcess], grace: Duration = .seconds(5)) async {
        await withTaskGroup(of: Void.self) { group in
            for process in processes {
                group.addTask { await process.stop(grace: grace) }
            }
        }
    }

    /// Kills the process at once (SIGKILL), as a crash would.
    public func kill9() async {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        while process.isRunning { try? await Task.sleep(for: .milliseconds(10)) }
    }
}

/// Locates the `shiftwork` executable built next to the test bundle (or at `SHIFTWORK_BINARY`).
public enum ShiftworkBinary {
    /// The executable's URL.
    public static var url: URL {
        if let path = ProcessInfo.processInfo.environment["SHIFTWORK_BINARY"] {
            return URL(fileURLWithPath: path)
        }
        let testBundle = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var directory = testBundle.deletingLastPathComponent()
        // On Linux the test binary is `.build/<triple>/debug/<Package>PackageTests.xctest`.
        for _ in 0..<3 {
            let candidate = directory.appendingPathComponent("shiftwork")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        return testBundle.deletingLastPathComponent().appendingPathComponent("shiftwork")
    }
}
