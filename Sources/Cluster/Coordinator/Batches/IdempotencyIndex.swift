/// Where the `BatchRegistry` finds a batch by its idempotency key: keys are a client's own
/// (`ClientIdentity.idempotencyScope`), so two clients with keys may use the same key.
struct IdempotencyIndex: Hashable {
    let scope: String
    let key: String
}
