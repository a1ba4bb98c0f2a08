/// One allow-list a coordinator reads, and the roles its keys get: `--allow-workers DIR` gives `worker`,
/// `--allow-keys DIR` every role.
public struct AllowListSource: Sendable, Equatable {
    /// A directory of `*.pub` files, or a file with one public key per line.
    public let path: String
    /// The roles of every key the list holds.
    public let roles: Set<PeerRole>
    /// The option it came from, for messages (`--allow-clients`).
    public let option: String

    /// Creates a source.
    public init(path: String, roles: Set<PeerRole>, option: String) {
        self.path = path
        self.roles = roles
        self.option = option
    }
}
