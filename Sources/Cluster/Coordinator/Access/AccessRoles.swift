import Messaging

/// The roles of every key a coordinator admits: the union of its allow-lists (a key on two lists has
/// the rights of both).
public struct AccessRoles: Sendable, Equatable {
    /// Each admitted key's roles (never empty).
    public private(set) var rolesByKey: [CurvePublicKey: Set<PeerRole>] = [:]

    /// No key at all.
    public init() {}

    /// Every key of `keys` with every role (what `--allow-keys` alone gives).
    public init(allRoles keys: Set<CurvePublicKey>) {
        for key in keys { rolesByKey[key] = Set(PeerRole.allCases) }
    }

    /// Gives `key` the `roles` on top of those it has.
    public mutating func grant(_ roles: Set<PeerRole>, to key: CurvePublicKey) {
        guard !roles.isEmpty else { return }
        rolesByKey[key, default: []].formUnion(roles)
    }

    /// The roles of `key`; empty when it is on no list.
    public func roles(of key: CurvePublicKey) -> Set<PeerRole> { rolesByKey[key] ?? [] }

    /// Every admitted key: the ZAP handler's allow-list.
    public var allKeys: Set<CurvePublicKey> { Set(rolesByKey.keys) }

    /// How many keys have `role`.
    public func count(of role: PeerRole) -> Int { rolesByKey.values.filter { $0.contains(role) }.count }

    /// The keys' counts per role, for logs: `workers 2, clients 3, admins 1`.
    public var summary: String {
        "workers \(count(of: .worker)), clients \(count(of: .client)), admins \(count(of: .admin))"
    }

    /// Reads every list of `sources` (blocking file reads: call it off Swift's cooperative pool). A
    /// role's list may be empty (no administrator yet), but not all of them together.
    ///
    /// - Throws: `CurveKeyError` naming the list and its option when one cannot be read or holds
    ///   something that is not a key, or when no list holds any key.
    public static func load(_ sources: [AllowListSource]) throws -> AccessRoles {
        var roles = AccessRoles()
        for source in sources {
            let keys: Set<CurvePublicKey>
            do {
                keys = try CurvePublicKey.loadAllowList(source.path, allowingEmpty: true)
            } catch let error as CurveKeyError {
                throw CurveKeyError("\(source.option): \(error.description)")
            }
            for key in keys { roles.grant(source.roles, to: key) }
        }
        if roles.rolesByKey.isEmpty {
            let lists = sources.map { "\($0.option) \($0.path)" }.joined(separator: ", ")
            throw CurveKeyError(
                "the allow-lists hold no public key (\(lists)): add the workers' and clients' NAME.pub "
                    + "files (`shiftwork keygen NAME` writes them)")
        }
        return roles
    }
}
