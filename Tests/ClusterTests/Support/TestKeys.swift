import Foundation
import ShiftworkTestSupport

/// CurveZMQ keys for a test, made with `shiftwork keygen` in a scratch directory: the coordinator's
/// pair, and a pair per peer name. Only the peers named in `allowed` are on the coordinator's allow-list
/// (the `allowed/` directory of their `.pub` files).
struct TestKeys {
    let directory: URL
    var allowList: URL { directory.appendingPathComponent("allowed") }

    /// Generates pairs for the coordinator, for every name in `allowed` (listed) and in `unlisted`.
    init(in scratch: URL, allowed: [String], unlisted: [String] = []) async throws {
        directory = scratch.appendingPathComponent("keys")
        try FileManager.default.createDirectory(at: allowList, withIntermediateDirectories: true)
        for name in ["coordinator"] + allowed + unlisted {
            let keygen = try ManagedProcess(
                "keygen \(name)", executable: ShiftworkBinary.url,
                arguments: ["keygen", name, "--out", directory.path])
            let status = await keygen.waitForExit(timeout: .seconds(30))
            guard status == 0 else { throw HarnessError("shiftwork keygen \(name) failed:\n\(keygen.outputText)") }
        }
        for name in allowed {
            try FileManager.default.copyItem(
                at: directory.appendingPathComponent("\(name).pub"),
                to: allowList.appendingPathComponent("\(name).pub"))
        }
    }

    func secretKey(_ name: String) -> String { directory.appendingPathComponent("\(name).key").path }
    func publicKey(_ name: String) -> String { directory.appendingPathComponent("\(name).pub").path }

    /// The public key of `name`, in Z85 (the last line of its `.pub` file).
    func z85(_ name: String) throws -> String {
        let text = try String(contentsOfFile: publicKey(name), encoding: .utf8)
        return text.split(separator: "\n").last(where: { !$0.hasPrefix("#") }).map(String.init) ?? ""
    }

    /// `--secret-key` and `--coordinator-key` for a worker or client using the pair `name`.
    func peerArguments(_ name: String) -> [String] {
        ["--secret-key", secretKey(name), "--coordinator-key", publicKey("coordinator")]
    }
}
