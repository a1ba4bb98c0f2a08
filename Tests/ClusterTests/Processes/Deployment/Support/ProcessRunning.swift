import Foundation
import ShiftworkTestSupport

/// Runs `executable` to completion and returns its exit status and output. Like every process these
/// tests start, it sees only the `SHIFTWORK_*` variables given in `environment`.
func runToCompletion(
    _ name: String, _ executable: URL, _ arguments: [String], environment: [String: String] = [:],
    timeout: Duration = .seconds(60)
) async throws -> (status: Int32?, output: String) {
    let process = try ManagedProcess(
        name, executable: executable, arguments: arguments,
        environment: blankingInheritedShiftworkVariables(except: environment),
        currentDirectory: Repository.root)
    let status = await process.waitForExit(timeout: timeout)
    if status == nil { await process.stop() }
    return (status, process.outputText)
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
