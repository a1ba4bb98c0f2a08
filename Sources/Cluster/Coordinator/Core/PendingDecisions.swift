import Messaging
import Wire

/// A batch planned and refused nothing, whose acceptance the journal has not confirmed yet: registered,
/// answered and started only once it has (`CoordinatorCore.admit`).
struct PendingAcceptance {
    let planned: RegisteredBatch
    let submit: SubmitBatch
    let sender: MessageSender
}

/// A retry whose items were chosen, whose record the journal has not confirmed yet: reopened only once it
/// has (`CoordinatorCore.reopen`).
struct PendingRetry {
    let request: RetryBatch
    let peer: PeerIdentity
    let items: [Int]
    let plan: RerunPlan
}
