import Messaging
import Synchronization
import Wire

/// The link between the two coordinators of a pair: a ROUTER bound at `--ha-listen`, on which the peer's
/// messages arrive, and a DEALER connected to the peer's `--ha-peer`, on which this one's go. Each socket
/// lives on a thread of its own (`SocketChannel`). With CurveZMQ both use the coordinator's key pair; the
/// peer's key is admitted by the coordinator's ZAP handler for this link alone (it has no role on the
/// socket of clients and workers).
///
/// Announcements go only while the DEALER's connection to the peer is live (its handshake done, not lost
/// since: ZMTP heartbeats drop a connection silent for the failover timeout): libzmq would otherwise queue them for a peer not yet there and deliver them, stale, when it comes
/// (a coordinator started hours ago would be heard "starting" first, and the peer would act on it). The next
/// heartbeat says the state as it is.
final class PairLink: Sendable {
    private let inbound: SocketChannel
    private let outbound: SocketChannel
    private let peerConnection: PeerConnection

    /// Whether the connection to the peer is live, as the DEALER's socket monitor last said.
    private final class PeerConnection: Sendable {
        let isLive = Atomic<Bool>(false)
    }

    /// Messages from the peer, in groups (each message `[identity, envelope]`).
    var received: SocketInbound { inbound.messageBatches }

    /// Where the link listens, with a wildcard port resolved.
    var boundEndpoint: String? { inbound.boundEndpoint }

    private init(inbound: SocketChannel, outbound: SocketChannel, peerConnection: PeerConnection) {
        self.inbound = inbound
        self.outbound = outbound
        self.peerConnection = peerConnection
    }

    /// Binds `configuration.listen` and connects to `configuration.peer`.
    ///
    /// - Throws: `ZeroMQError` when the endpoint cannot be bound or the peer's is malformed.
    static func open(
        context: MessagingContext, configuration: PairConfiguration, keyPair: CurveKeyPair?,
        maxMessageSize: Int64
    ) async throws -> PairLink {
        var serverOptions = SocketOptions()
        serverOptions.maxMessageSize = maxMessageSize
        serverOptions.routerMandatory = false
        var clientOptions = SocketOptions()
        clientOptions.maxMessageSize = maxMessageSize
        clientOptions.reconnectIntervalMaxMilliseconds = 500
        // ZMTP heartbeats on the connection to the peer: a link cut silently (a partition, a dead host) is
        // dropped and reported lost after the failover timeout, so announcements stop until it is live again
        // and what was queued for it is discarded rather than delivered stale when it heals.
        clientOptions = CoordinatorHeartbeats.applied(
            to: clientOptions, interval: configuration.heartbeat(atMost: CoordinatorHeartbeats.interval),
            timeout: configuration.failoverTimeout)
        if let keyPair {
            serverOptions.curve = .server(keyPair)
            clientOptions.curve = .client(keyPair, serverKey: configuration.peerKey ?? keyPair.publicKey)
        }
        let inbound = try await SocketChannel.open(
            context: context, kind: .router, options: serverOptions, bind: [configuration.listen], name: "pair-in")
        let peerConnection = PeerConnection()
        do {
            let outbound = try await SocketChannel.open(
                context: context, kind: .dealer, options: clientOptions, connect: [configuration.peer],
                name: "pair-out",
                onConnectionEvent: { event in
                    switch event {
                    case .live: peerConnection.isLive.store(true, ordering: .releasing)
                    case .lost: peerConnection.isLive.store(false, ordering: .releasing)
                    }
                })
            return PairLink(inbound: inbound, outbound: outbound, peerConnection: peerConnection)
        } catch {
            await inbound.close()
            throw error
        }
    }

    /// Sends `messages` to the peer, in order (queued while it is not connected).
    func send(_ messages: [Message]) {
        guard !messages.isEmpty else { return }
        outbound.send(contentsOf: messages.map { [WireCodec.encode($0)] })
    }

    /// Sends an announcement to the peer if the connection to it is live; otherwise drops it (the next
    /// heartbeat's says the state then).
    func announce(_ announcement: Message) {
        guard peerConnection.isLive.load(ordering: .acquiring) else { return }
        send([announcement])
    }

    /// Closes both sockets.
    func close() async {
        await outbound.close()
        await inbound.close()
    }
}
