import Foundation
import ShiftworkTestSupport

extension ClusterHarness {
    /// Starts a coordinator on a free loopback port with its metrics on another (`--metrics-listen`);
    /// returns its endpoint and the metrics page's URL.
    func startMeteredCoordinator(_ extraArguments: [String] = []) async throws -> (endpoint: String, metricsURL: String)
    {
        let coordinator = try launch(
            "coordinator",
            [
                "coordinator", "--listen", "tcp://127.0.0.1:*", "--insecure",
                "--metrics-listen", "127.0.0.1:0",
            ] + extraArguments)
        let endpointLine = await coordinator.waitForLine { $0.contains("listening on") }
        let metricsLine = await coordinator.waitForLine { $0.hasPrefix("metrics on ") }
        guard let endpoint = endpointLine?.components(separatedBy: "listening on ").last,
            let metricsURL = metricsLine?.components(separatedBy: "metrics on ").last
        else { throw HarnessError("the coordinator did not start:\n\(coordinator.outputText)") }
        return (endpoint.trimmingCharacters(in: .whitespaces), metricsURL.trimmingCharacters(in: .whitespaces))
    }
}

/// Reads one unlabelled sample of a Prometheus text page.
enum MetricsPage {
    /// The value of `name`'s sample, as a whole number; `nil` when the page has none.
    static func value(_ name: String, in page: String) -> Int? {
        page.split(separator: "\n").first { $0.hasPrefix(name + " ") }.flatMap {
            Int(Double($0.split(separator: " ")[1]) ?? -1)
        }
    }
}
