import Messaging

/// The coordinator's access state, free of I/O: the roles of the admitted keys, who owns each batch, and
/// how many requests were refused. Decisions are `AccessPolicy`'s; this feeds it and counts.
struct AccessControl {
    /// The roles of the admitted keys; `nil` without CurveZMQ: every peer has every role.
    private(set) var roles: AccessRoles?
    /// The owner (submitter's key) of each batch the coordinator holds that was submitted with one.
    private(set) var owners: [String: CurvePublicKey] = [:]
    /// Refusals so far, by labels (`shiftwork_refusals_total`).
    private(set) var refusals: [AccessRefusal.Labels: UInt64] = [:]

    init(roles: AccessRoles?) { self.roles = roles }

    /// The sender with `key`, as `AccessPolicy` sees it.
    func peer(_ key: CurvePublicKey?) -> PeerAccess {
        guard let roles else { return .unrestricted }
        guard let key else { return PeerAccess(key: nil, roles: []) }
        return PeerAccess(key: key, roles: roles.roles(of: key))
    }

    /// The owner of `batchID`, given whether the coordinator holds that batch.
    func owner(of batchID: String, isKnown: Bool) -> BatchOwner {
        guard isKnown else { return .unknownBatch }
        return owners[batchID].map(BatchOwner.key) ?? .nobody
    }

    /// Decides `request` from the sender with `key`, and counts a refusal.
    mutating func decide(_ request: AccessRequest, from key: CurvePublicKey?) -> AccessDecision {
        let decision = AccessPolicy.decide(request, by: peer(key))
        if case .refused(let refusal) = decision { refusals[refusal.labels, default: 0] += 1 }
        return decision
    }

    /// Counts a refusal decided elsewhere (`WorkerBinding`), under the labels of `key`'s roles.
    mutating func count(_ reason: AccessRefusal.Reason, request: AccessRequest, from key: CurvePublicKey?) {
        refusals[
            AccessRefusal.Labels(role: PeerRole.label(peer(key).roles), request: request.label, reason: reason),
            default: 0] += 1
    }

    /// Records who submitted `batchID` (nothing without a key).
    mutating func recordOwner(_ key: CurvePublicKey?, of batchID: String) {
        owners[batchID] = key
    }

    /// Forgets the owner of a batch the coordinator let go.
    mutating func forget(_ batchID: String) {
        owners[batchID] = nil
    }

    /// Replaces the roles (a reload of the allow-lists). Without CurveZMQ there are none to replace.
    mutating func replaceRoles(_ newRoles: AccessRoles) {
        guard roles != nil else { return }
        roles = newRoles
    }
}
