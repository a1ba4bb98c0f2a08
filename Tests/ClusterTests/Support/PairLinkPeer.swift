import Foundation
import Messaging
import Wire

@testable import Cluster

/// A coordinator of a pair played by the test on the pair's real link (docs/failover.md, "The link"): a ROUTER
/// bound on loopback, which a real coordinator is given as its `--ha-peer` (its announcements and `PairHeld`
/// answers arrive there), and a DEALER connected to that coordinator's `--ha-listen`, on which this peer sends
/// whatever the test makes: announcements of another major version, a journal stream with a damaged frame.
final class PairLinkPeer: Sendable {
    /// Where the coordinator's messages arrive.
    let inbound: WirePeer
    /// Where this peer's messages go (to the coordinator's `--ha-listen`).
    let outbound: WirePeer

    /// The endpoint to give the coordinator as `--ha-peer`.
    var endpoint: String { inbound.channel.boundEndpoint ?? "" }

    private init(inbound: WirePeer, outbound: WirePeer) {
        self.inbound = inbound
        self.outbound = outbound
    }

    /// Binds a ROUTER on loopback (at `bind`, a free port by default) and connects a DEALER to `haListen`;
    /// with `keyPair`, both speak CurveZMQ with it, as a coordinator of a pair that shares its key pair does.
    static func open(
        connectingTo haListen: String, bind: String = "tcp://127.0.0.1:*", keyPair: CurveKeyPair? = nil,
        context: MessagingContext
    ) async throws -> PairLinkPeer {
        var serverOptions = SocketOptions()
        var clientOptions = SocketOptions()
        if let keyPair {
            serverOptions.curve = .server(keyPair)
            clientOptions.curve = .client(keyPair, serverKey: keyPair.publicKey)
        }
        let inbound = try await WirePeer(
            kind: .router, identity: nil, bind: bind, options: serverOptions, context: context)
        do {
            let outbound = try await WirePeer(
                kind: .dealer, identity: "test-pair-peer", connect: haListen, options: clientOptions, context: context)
            return PairLinkPeer(inbound: inbound, outbound: outbound)
        } catch {
            await inbound.close()
            throw error
        }
    }

    /// A hello as a coordinator of cluster `cluster` sends it.
    static func hello(
        cluster: String = "shiftwork", major: UInt32 = WireProtocol.major, pairVersion: UInt32 = PairSession.pairVersion
    ) -> WirePairHello {
        WirePairHello(
            cluster: cluster, major: major, pairVersion: pairVersion, coordinatorID: "test-pair-peer",
            serviceEndpoint: "tcp://127.0.0.1:1")
    }

    /// Announces `state` at `position` with `hello`.
    func announce(
        _ state: WirePairState, role: WirePairRole = .primary, at position: JournalPosition,
        hello: WirePairHello = PairLinkPeer.hello()
    ) {
        outbound.send(
            .pairAnnouncement(WirePairAnnouncement(hello: hello, role: role, state: state, position: position.wire)))
    }

    /// Sends `bytes` as they are (an envelope the test made by hand).
    func sendRaw(_ bytes: [UInt8]) {
        outbound.channel.send([bytes])
    }

    /// The coordinator's next announcement that `match` accepts.
    func nextAnnouncement(
        timeout: Duration = .seconds(30), where match: @escaping (WirePairAnnouncement) -> Bool = { _ in true }
    ) async -> WirePairAnnouncement? {
        await inbound.next(timeout: timeout) {
            if case .pairAnnouncement(let announcement) = $0, match(announcement) { announcement } else { nil }
        }
    }

    /// The coordinator's next `PairHeld`.
    func nextHeld(timeout: Duration = .seconds(30)) async -> WirePairHeld? {
        await inbound.next(timeout: timeout) { if case .pairHeld(let held) = $0 { held } else { nil } }
    }

    /// Closes both sockets.
    func close() async {
        await outbound.close()
        await inbound.close()
    }
}
