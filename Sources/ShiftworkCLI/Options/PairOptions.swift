import ArgumentParser
import Cluster
import Foundation
import Messaging

/// `--ha primary|backup`, `--ha-listen`, `--ha-peer`, `--ha-peer-key`, `--failover-timeout`, `--cluster`:
/// a coordinator of a primary/backup pair (docs/failover.md). Without `--ha` the coordinator runs alone.
struct PairOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Run as one of a pair of coordinators: primary or backup (env SHIFTWORK_HA). The active one streams its journal to the other, which takes over when it fails. Needs --ha-listen, --ha-peer and --data-dir.",
            valueName: "primary|backup"))
    var ha: String?

    @Option(
        help: ArgumentHelp(
            "Endpoint this coordinator binds for its peer of the pair, e.g. tcp://0.0.0.0:5580 (env SHIFTWORK_HA_LISTEN).",
            valueName: "endpoint"))
    var haListen: String?

    @Option(
        help: ArgumentHelp(
            "The other coordinator's --ha-listen endpoint, e.g. tcp://coordinator-b:5580 (env SHIFTWORK_HA_PEER).",
            valueName: "endpoint"))
    var haPeer: String?

    @Option(
        help: ArgumentHelp(
            "The other coordinator's public key file (its NAME.pub; env SHIFTWORK_HA_PEER_KEY). Default: this coordinator's own public key (a pair sharing one key pair). Only with --secret-key; the key is admitted for the pair's link alone.",
            valueName: "file"))
    var haPeerKey: String?

    @Option(
        help:
            "Seconds without hearing the active coordinator before the passive one may take over, when a client or worker turns to it (env SHIFTWORK_FAILOVER_TIMEOUT; default 2). The heartbeat becomes at most a third of it."
    )
    var failoverTimeout: Double?

    @Option(
        help:
            "The pair's cluster name, the same on both coordinators: a peer of another cluster is refused (env SHIFTWORK_CLUSTER; default shiftwork)."
    )
    var cluster: String?

    /// Test hook (hidden): the passive coordinator answers how far it holds only after this many
    /// milliseconds, to test a slow backup.
    @Option(help: .hidden)
    var haAnswerDelayMs: Int?

    /// The pair's settings, or `nil` without `--ha`.
    func configuration(hasDataDirectory: Bool) throws -> PairConfiguration? {
        guard let roleText = Environment.resolve(ha, "HA") else {
            if haListen != nil || haPeer != nil || haPeerKey != nil {
                throw CommandError("--ha-listen, --ha-peer and --ha-peer-key need --ha primary or --ha backup")
            }
            return nil
        }
        guard let role = PairRole(rawValue: roleText.lowercased()) else {
            throw CommandError("--ha \(roleText) is not a role of a pair: give primary or backup")
        }
        guard let listen = Environment.resolve(haListen, "HA_LISTEN"), let peer = Environment.resolve(haPeer, "HA_PEER")
        else {
            throw CommandError(
                "--ha needs --ha-listen ENDPOINT (where this coordinator listens for its peer) and --ha-peer ENDPOINT "
                    + "(the other coordinator's --ha-listen), e.g. --ha-listen tcp://0.0.0.0:5580 --ha-peer tcp://other:5580"
            )
        }
        guard hasDataDirectory else {
            throw CommandError(
                "--ha needs --data-dir: the pair replicates its journal, so each coordinator keeps its own on disk")
        }
        let seconds = try Environment.resolve(failoverTimeout, "FAILOVER_TIMEOUT", default: 2)
        guard seconds.isFinite, seconds >= 0.3, seconds <= 3600 else {
            throw CommandError("--failover-timeout must be 0.3 to 3600 seconds (got \(seconds))")
        }
        var peerKey: CurvePublicKey?
        if let path = Environment.resolve(haPeerKey, "HA_PEER_KEY") {
            do {
                peerKey = try CurvePublicKey.load(file: path)
            } catch let error as CurveKeyError {
                throw CommandError("--ha-peer-key (SHIFTWORK_HA_PEER_KEY): \(error.description)")
            }
        }
        let name = Environment.resolve(cluster, "CLUSTER", default: "shiftwork")
        guard !name.isEmpty, name.utf8.count <= 64 else {
            throw CommandError("--cluster must be 1 to 64 bytes (got \(name.utf8.count))")
        }
        var pair = PairConfiguration(
            role: role, listen: listen, peer: peer, peerKey: peerKey,
            failoverTimeout: .milliseconds(Int64(seconds * 1000)), cluster: name)
        if let delay = haAnswerDelayMs, delay > 0 { pair.answerDelay = .milliseconds(delay) }
        return pair
    }
}
