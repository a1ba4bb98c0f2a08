/// What `AccessPolicy` decides about one request.
enum AccessDecision: Equatable {
    /// Carry it out; a list of batches shows those of `scope`.
    case allowed(BatchScope)
    /// Refuse it, with `REFUSAL_CODE_FORBIDDEN` and the refusal's reason.
    case refused(AccessRefusal)
}
