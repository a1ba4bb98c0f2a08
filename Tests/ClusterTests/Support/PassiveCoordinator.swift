import Foundation
import Messaging
import Runtime
import Wire

/// Stands in for the passive coordinator of a pair: a real ROUTER socket on loopback that answers every
/// message it receives with `Refusal{REFUSAL_CODE_PASSIVE}` (the request's ID, when it has one), as a
/// passive coordinator does (docs/protocol.md). It exists within `with`'s scope, which closes its socket and
/// waits for its reader.
final class PassiveCoordinator: Sendable {
    /// Where it listens.
    let endpoint: String
    private let counted = InlineLock(0)

    private init(endpoint: String) {
        self.endpoint = endpoint
    }

    /// How many messages it has refused so far.
    var refusals: Int { counted.withLock { $0 } }

    /// Runs `body` with a passive coordinator listening on a free loopback port.
    static func with<Value>(
        isolation: isolated (any Actor)? = #isolation, _ body: (PassiveCoordinator) async throws -> Value
    ) async throws -> Value {
        let context = try MessagingContext()
        let router: SocketChannel
        do {
            router = try await SocketChannel.open(
                context: context, kind: .router, bind: ["tcp://127.0.0.1:*"], name: "passive")
        } catch {
            await context.terminate()
            throw error
        }
        let passive = PassiveCoordinator(endpoint: router.boundEndpoint ?? "")
        let outcome = await withDiscardingTaskGroup(returning: Result<Value, any Error>.self) { group in
            group.addTask { await passive.refuseEverything(arrivingAt: router) }
            let outcome: Result<Value, any Error>
            do {
                outcome = .success(try await body(passive))
            } catch {
                outcome = .failure(error)
            }
            await router.close()  // ends the reader
            return outcome
        }
        await context.terminate()
        return try outcome.get()
    }

    private func refuseEverything(arrivingAt router: SocketChannel) async {
        for await frames in router.messages {
            guard frames.count == 2, let message = try? WireCodec.decode(frames[1]) else { continue }
            counted.withLock { $0 += 1 }
            let refusal = Refusal(
                requestID: Self.requestID(of: message), code: .passive,
                reason: "this coordinator is the passive one of its pair: turn to the other")
            router.send([frames[0], WireCodec.encode(.refusal(refusal))])
        }
    }

    private static func requestID(of message: Message) -> String {
        switch message {
        case .submitBatch(let submit): submit.requestID
        case .statusRequest(let request): request.requestID
        case .fetchResults(let fetch): fetch.requestID
        case .cancelBatch(let cancel): cancel.requestID
        case .retryBatch(let retry): retry.requestID
        default: ""
        }
    }
}
