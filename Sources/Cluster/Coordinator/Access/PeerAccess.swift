import Messaging

/// The sender of a request, as access control sees it: its key and the roles the allow-lists give it.
struct PeerAccess: Equatable {
    /// The key it authenticated with; `nil` without CurveZMQ.
    let key: CurvePublicKey?
    let roles: Set<PeerRole>

    /// A peer of a coordinator without CurveZMQ: every role, no key (everyone sees everything, as
    /// anyone who reaches an unauthenticated coordinator could claim any role anyway).
    static let unrestricted = PeerAccess(key: nil, roles: Set(PeerRole.allCases))

    func has(_ role: PeerRole) -> Bool { roles.contains(role) }
}
