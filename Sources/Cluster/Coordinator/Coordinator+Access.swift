import Foundation
import Messaging
import Runtime
import Wire

/// Roles for keys: each message is checked against the roles its sender's key has (`AccessPolicy`) before
/// it is carried out; a refusal is answered with `REFUSAL_CODE_FORBIDDEN`, logged and counted. The
/// allow-lists can be read again while the coordinator runs (`reloadAllowLists`, on SIGHUP).
extension Coordinator {
    /// Whether `message` from `sender` may be carried out: the batches it may see, or `nil` when it was
    /// refused (the refusal has been sent, logged and counted).
    func authorize(_ message: Message, from sender: MessageSender) -> BatchScope? {
        guard let request = accessRequest(for: message) else { return .all }  // dropped as a coordinator's message
        switch access.decide(request, from: sender.key) {
        case .allowed(let scope):
            return scope
        case .refused(let refusal):
            if logThrottle.admit("refused a request: the key lacks the role", now: .now) {
                logger.warning(
                    "refused a request: the key lacks the role it needs",
                    metadata: [
                        "peer": "\(sender.identity)", "key": "\(sender.key?.z85 ?? "-")",
                        "role": "\(refusal.labels.role)",
                        "request": "\(refusal.labels.request)", "reason": "\(refusal.message)",
                    ])
            }
            send([
                Outbound(
                    peer: sender.identity,
                    message: .refusal(
                        Refusal(
                            requestID: Self.requestID(of: message), code: .forbidden, reason: refusal.message)))
            ])
            return nil
        }
    }

    /// What `message` asks, for access control; `nil` for the messages only a coordinator sends.
    private func accessRequest(for message: Message) -> AccessRequest? {
        func batch(_ action: AccessRequest.BatchAction, _ batchID: String) -> AccessRequest {
            .batch(
                action, batchID: batchID, owner: access.owner(of: batchID, isKnown: registry.batches[batchID] != nil))
        }
        switch message {
        case .workerHello, .heartbeat, .workerGoodbye, .taskResult, .taskResults, .taskGivenBack:
            return .workerMessage
        case .submitBatch:
            return .submit
        case .statusRequest(let request):
            return request.batchID.isEmpty ? .listBatches : batch(.status, request.batchID)
        case .cancelBatch(let request):
            return batch(.cancel, request.batchID)
        case .fetchResults(let request):
            return batch(.results, request.batchID)
        case .retryBatch(let request):
            return batch(.retry, request.batchID)
        case .welcome, .taskAssignment, .taskAssignments, .cancelTask, .giveBackTask, .batchAccepted, .itemFinished,
            .itemsFinished,
            .itemsAdded, .batchFinished, .statusReply, .cancelAccepted, .retryAccepted, .refusal, .pairAnnouncement,
            .pairJournal, .pairHeld, .pairResultFile, .pairSnapshot:
            return nil
        }
    }

    /// The correlation ID a refusal of `message` carries (empty for a worker's messages).
    static func requestID(of message: Message) -> String {
        switch message {
        case .submitBatch(let request): request.requestID
        case .statusRequest(let request): request.requestID
        case .cancelBatch(let request): request.requestID
        case .fetchResults(let request): request.requestID
        case .retryBatch(let request): request.requestID
        default: ""
        }
    }

    /// Reads the allow-lists again from the paths the coordinator was started with (what SIGHUP does):
    /// keys added are admitted at their next handshake, keys removed are refused from their next message
    /// on, roles changed apply at once. The files are read on a thread of `ComputeThreads.shared`.
    ///
    /// - Returns: the roles now in force; `nil` without CurveZMQ or without lists to read.
    /// - Throws: `CurveKeyError` when a list cannot be read (it is logged, and the lists in force stay).
    @discardableResult
    public func reloadAllowLists() async throws -> AccessRoles? {
        guard let sources = configuration.authentication?.sources, !sources.isEmpty else {
            logger.notice("nothing to reload: the coordinator runs without allow-lists")
            return nil
        }
        let roles: AccessRoles
        do {
            roles = try await ComputeThreads.shared.run { _ in try AccessRoles.load(sources) }
        } catch {
            logger.error("could not reload the allow-lists; the ones in force stay", metadata: ["error": "\(error)"])
            throw error
        }
        applyAllowLists(roles)
        return roles
    }

    /// Puts `roles` in force: the ZAP handler admits their keys, and messages are checked against them.
    public func applyAllowLists(_ roles: AccessRoles) {
        access.replaceRoles(roles)
        replaceAdmittedKeys(roles.allKeys.union(pairKeys))
        logger.info("allow-lists loaded", metadata: ["keys": "\(roles.rolesByKey.count)", "roles": "\(roles.summary)"])
    }
}
