// The client messages' types are generated from proto/ (Generated/ClientMessages.generated.swift); what they
// mean beyond their fields is here.

extension Refusal {
    /// What a coordinator answers a worker it does not know (a heartbeat from an identity that has not
    /// said hello); the worker registers again.
    public static let unknownWorker = Refusal(code: .unknownWorker, reason: unknownWorkerReason)

    /// The reason text of ``unknownWorker``. Minor-1 workers recognise the refusal by this text, so it
    /// never changes; a refusal without a code that carries it decodes as ``RefusalCode/unknownWorker``.
    static let unknownWorkerReason = "unknown worker: send hello"

    /// Called by the generated decoder: a minor-1 coordinator sends no code, and its one refusal a worker acts
    /// on is known by its text, so a refusal without a code that carries ``unknownWorkerReason`` is
    /// ``RefusalCode/unknownWorker``.
    mutating func recognizeMinorOneCode() {
        if code == .unspecified, reason == Refusal.unknownWorkerReason {
            code = .unknownWorker
        }
    }
}
