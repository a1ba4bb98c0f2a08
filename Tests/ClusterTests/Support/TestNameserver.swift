import Foundation
import ShiftworkTestSupport

/// A DNS server for a test (`Processes/Networks/Resources/dns-responder.py`, Python's standard library
/// only): answers A and AAAA queries for the names it is given, NXDOMAIN for others, on port 53 of an
/// address of the test's own (a `NetworkNamespace` link's host side). A process the harness stops.
enum TestNameserver {
    /// Starts the server on `address`, answering `records` (name → addresses); returns once it listens.
    static func start(
        on address: String, records: [String: [String]], harness: ClusterHarness
    ) async throws -> ManagedProcess {
        guard let script = Bundle.module.url(forResource: "dns-responder", withExtension: "py") else {
            throw HarnessError(
                "dns-responder.py is missing from the ClusterTests bundle (see its resources in Package.swift)")
        }
        let pairs = records.sorted { $0.key < $1.key }.flatMap { name, addresses in addresses.map { "\(name)=\($0)" } }
        // The system's Python (standard library only): fast to start, whatever shims PATH holds.
        let server = try harness.launch(
            "nameserver", executable: URL(fileURLWithPath: "/usr/bin/python3"),
            [script.path, address] + pairs)
        guard await server.waitForLine(where: { $0.contains("dns responder listening") }) != nil else {
            throw HarnessError("the test's DNS server did not start:\n\(server.outputText)")
        }
        return server
    }
}
