import Foundation
import ShiftworkTestSupport

/// `shiftwork` processes on another "host": inside a `NetworkNamespace` (`ip netns exec`, which becomes
/// the process itself, so its pid is `shiftwork`'s and signals reach it), stopped with the others.
extension ClusterHarness {
    /// Starts `shiftwork` with `arguments` inside `namespace`.
    @discardableResult
    func launch(_ name: String, in namespace: NetworkNamespace, _ arguments: [String]) throws -> ManagedProcess {
        let (ip, command) = namespace.exec([ShiftworkBinary.url.path] + arguments)
        return try launch(name, executable: ip, command)
    }

    /// Runs a CLI command inside `namespace` to completion; returns its exit status and output.
    func run(
        _ arguments: [String], in namespace: NetworkNamespace,
        timeout: Duration = .seconds(60)
    ) async throws -> (status: Int32?, output: String) {
        let process = try launch(arguments.first ?? "cli", in: namespace, arguments)
        let status = await process.waitForExit(timeout: timeout)
        return (status, process.outputText)
    }
}

/// The IDs of the workers in a status reply, sorted.
func statusWorkerIDs(_ status: [String: Any]) -> [String] {
    status.objects("workers").compactMap { $0["id"] as? String }.sorted()
}
