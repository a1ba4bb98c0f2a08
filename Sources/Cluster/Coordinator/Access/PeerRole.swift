/// What a CurveZMQ key may do on a coordinator, from the allow-list it is on.
///
/// - `worker`: register as a worker, take tasks and send their results (`--allow-workers`).
/// - `client`: submit batches, and see, cancel and fetch the batches it submitted (`--allow-clients`).
/// - `admin`: see, cancel and fetch every batch (`--allow-admins`).
///
/// A key on several lists has the union of their rights; `--allow-keys` gives every role.
public enum PeerRole: String, Sendable, Hashable, CaseIterable, Comparable {
    case worker
    case client
    case admin

    /// Workers, then clients, then administrators (the order of labels).
    public static func < (lhs: PeerRole, rhs: PeerRole) -> Bool { lhs.rank < rhs.rank }

    private var rank: Int {
        switch self {
        case .worker: 0
        case .client: 1
        case .admin: 2
        }
    }

    /// A set of roles as one label for logs and metrics: `worker`, `client+admin`, or `none`.
    static func label(_ roles: Set<PeerRole>) -> String {
        roles.isEmpty ? "none" : roles.sorted().map(\.rawValue).joined(separator: "+")
    }
}
