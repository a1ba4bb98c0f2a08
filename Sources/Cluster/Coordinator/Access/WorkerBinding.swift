import Messaging

/// Binds a worker's messages to the registration they speak for: a pure decision (what the sender is, and
/// what the coordinator holds for the worker ID, the connection or the task named, in; accept or refuse
/// with a reason out), free of sockets and state, like `AccessPolicy`.
///
/// The coordinator knows a worker by its connection's routing identity (`PeerIdentity`), which the worker
/// chooses (its worker ID) and which a new connection with the same identity takes over (ROUTER handover,
/// so that a restarted worker comes back under its name). With CurveZMQ each message also carries the key
/// its connection authenticated with (`MessageSender.key`, from libzmq, never from the message). Rules:
/// - A registration belongs to the key that made it. A message from its routing identity with another key
///   (another peer took the identity over) is refused: its heartbeats, results and goodbyes are not the
///   registered worker's, and its hello does not replace that worker.
/// - A worker ID belongs to one connection at a time: a hello naming an ID that another routing identity
///   has registered is refused, whatever the key.
/// - A result answers only for a task assigned to the sender's own connection: one for the current attempt
///   of a task that runs on another worker is refused. (A result of an older attempt is stale, and the
///   dispatcher drops and counts it as before.)
///
/// Without CurveZMQ there is no key: the rules hold by routing identity alone, so a peer that connects
/// with a registered worker's identity takes its registration over (see docs/protocol.md, security).
enum WorkerBinding {
    /// A registered worker as the binding sees it.
    struct Registration: Equatable {
        let peer: PeerIdentity
        let workerID: String
        /// The key it registered with; `nil` without CurveZMQ.
        let key: CurvePublicKey?
    }

    /// What a worker's message claims.
    enum Claim: Equatable {
        /// `WorkerHello` for `workerID`; `holder` is the registration that has that ID, if any.
        case hello(workerID: String, holder: Registration?)
        /// `Heartbeat` or `WorkerGoodbye`: it speaks for the sender's registration.
        case registered
        /// A `TaskResult` for `taskID`; `runningOn` is the connection the task's current attempt was
        /// assigned to when the result is for that attempt, `nil` otherwise (stale, or an unknown task).
        case result(taskID: String, runningOn: PeerIdentity?)
    }

    /// A refused worker message: why (a metrics label) and what to tell the sender and the log.
    struct Refusal: Equatable {
        let reason: AccessRefusal.Reason
        let message: String
    }

    /// Decides `claim` from `sender`, whose routing identity has the registration `registered` (if any).
    /// `nil`: accept it.
    static func decide(_ claim: Claim, from sender: MessageSender, registered: Registration?) -> Refusal? {
        if let registered, registered.key != sender.key {
            return Refusal(
                reason: .workerKeyMismatch,
                message: "worker ID \(registered.workerID) is registered with "
                    + "another key (\(keyPhrase(registered.key))) than this connection's (\(keyPhrase(sender.key))): its "
                    + "registration cannot be taken over; if this worker was restarted with a new key, start it again once "
                    + "the old registration has expired, or give it another --worker-id")
        }
        switch claim {
        case .registered:
            return nil
        case .hello(let workerID, let holder):
            guard let holder, holder.peer != sender.identity else { return nil }
            return Refusal(
                reason: .workerIDTaken,
                message: "worker ID \(workerID) is registered by another connection "
                    + "(\(holder.peer)): a worker ID belongs to one worker at a time; give this worker another --worker-id"
            )
        case .result(let taskID, let runningOn):
            guard let runningOn, runningOn != sender.identity else { return nil }
            return Refusal(
                reason: .notAssigned,
                message: "a result for task \(taskID), which was assigned to "
                    + "another worker (\(runningOn)), not to this connection (\(sender.identity))")
        }
    }

    private static func keyPhrase(_ key: CurvePublicKey?) -> String {
        key.map { "key \($0.z85)" } ?? "no key"
    }
}
