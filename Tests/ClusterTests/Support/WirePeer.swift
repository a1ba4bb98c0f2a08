import Foundation
import Messaging
import Runtime
import Wire

/// A peer played on a real ZeroMQ socket, so that a test can send what a `shiftwork` process never would
/// (an older protocol version's bytes, a lying worker's messages), and see what it is sent back.
///
/// With `envelopeMinor`, every envelope it sends says that minor version (a minor-1 peer: the messages it
/// is given must leave the later minors' fields at their defaults).
final class WirePeer: Sendable {
    let channel: SocketChannel
    /// What arrived (taken apart, and as sent), how much of it `next` has gone past, and who sent the last message.
    private final class Inbox: Sendable {
        let state = InlineLock<(messages: [Message], consumed: Int, identity: [UInt8]?)>(([], 0, nil))
        let whole = InlineLock<[Message]>([])
    }
    private let inbox = Inbox()
    private let reader: Task<Void, Never>
    private let envelopeMinor: UInt8?

    /// Opens the socket: a DEALER that connects or a ROUTER that binds, with `options` (CurveZMQ keys, say)
    /// and the routing identity `identity`.
    init(
        kind: SocketKind, identity: String?, connect: String? = nil, bind: String? = nil,
        options: SocketOptions = SocketOptions(), envelopeMinor: UInt8? = nil, context: MessagingContext
    ) async throws {
        var options = options
        options.identity = identity.map { Array($0.utf8) }
        self.envelopeMinor = envelopeMinor
        channel = try await SocketChannel.open(
            context: context, kind: kind, options: options,
            bind: bind.map { [$0] } ?? [], connect: connect.map { [$0] } ?? [],
            name: identity ?? "peer")
        let channel = self.channel
        let inbox = self.inbox
        reader = Task {
            for await frames in channel.messages {
                guard let payload = frames.last, let message = try? WireCodec.decode(payload) else { continue }
                inbox.whole.withLock { $0.append(message) }
                inbox.state.withLock {
                    $0.messages += MessageBatching.unbatched(message)
                    if frames.count == 2 { $0.identity = frames[0] }
                }
            }
        }
    }

    /// Everything received so far, batch messages taken apart.
    var received: [Message] { inbox.state.withLock { $0.messages } }

    /// Everything received so far, each message as it came (a batch message whole): how a peer grouped them.
    var receivedWhole: [Message] { inbox.whole.withLock { $0 } }

    /// The identity of the peer that sent the last message (a ROUTER's view).
    var lastIdentity: [UInt8]? { inbox.state.withLock { $0.identity } }

    /// Sends `message` (to the peer `identity`, from a ROUTER).
    func send(_ message: Message, to identity: [UInt8]? = nil) {
        var bytes = WireCodec.encode(message)
        if let envelopeMinor {
            precondition(
                Array(bytes.prefix(4)) == [0x08, UInt8(WireProtocol.major), 0x10, UInt8(WireProtocol.minor)],
                "an envelope starts with its version")
            bytes[3] = envelopeMinor
        }
        channel.send((identity.map { [$0] } ?? []) + [bytes])
    }

    /// The first message after those `next` went past (received already, or arriving within `timeout`)
    /// that `match` picks; the next call looks after it.
    func next<T>(timeout: Duration = .seconds(15), _ match: (Message) -> T?) async -> T? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let (messages, start) = inbox.state.withLock { ($0.messages, $0.consumed) }
            for index in start..<messages.count {
                if let found = match(messages[index]) {
                    inbox.state.withLock { $0.consumed = index + 1 }
                    return found
                }
            }
            inbox.state.withLock { $0.consumed = messages.count }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return nil
    }

    func close() async {
        await channel.close()
        reader.cancel()
    }
}
