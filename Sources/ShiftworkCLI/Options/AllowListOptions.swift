import ArgumentParser
import Cluster
import Messaging

/// The coordinator's allow-lists: `--allow-workers`, `--allow-clients`, `--allow-admins` (one role each)
/// and `--allow-keys` (every role). A key on several lists has the union of their roles. With
/// `--secret-key` they turn CurveZMQ on; SIGHUP reads them again.
struct AllowListOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Public keys with every role (worker, client and admin): a directory of *.pub files, or a file with one key per line (env SHIFTWORK_ALLOW_KEYS). Any key on no list is refused.",
            valueName: "path"))
    var allowKeys: String?

    @Option(
        help: ArgumentHelp(
            "Public keys of workers: they may register and run tasks, not submit or read batches (env SHIFTWORK_ALLOW_WORKERS).",
            valueName: "path"))
    var allowWorkers: String?

    @Option(
        help: ArgumentHelp(
            "Public keys of clients: they submit batches and see, cancel and fetch only their own (env SHIFTWORK_ALLOW_CLIENTS).",
            valueName: "path"))
    var allowClients: String?

    @Option(
        help: ArgumentHelp(
            "Public keys of administrators: they see and cancel every batch (env SHIFTWORK_ALLOW_ADMINS).",
            valueName: "path"))
    var allowAdmins: String?

    /// The lists given (by option or environment), with the roles of their keys.
    func sources() -> [AllowListSource] {
        let lists: [(String?, String, String, Set<PeerRole>)] = [
            (allowKeys, "ALLOW_KEYS", "--allow-keys", Set(PeerRole.allCases)),
            (allowWorkers, "ALLOW_WORKERS", "--allow-workers", [.worker]),
            (allowClients, "ALLOW_CLIENTS", "--allow-clients", [.client]),
            (allowAdmins, "ALLOW_ADMINS", "--allow-admins", [.admin]),
        ]
        return lists.compactMap { option, variable, name, roles in
            Environment.resolve(option, variable).map { AllowListSource(path: $0, roles: roles, option: name) }
        }
    }

    /// The CurveZMQ setting from these lists and `secretKey`. Any endpoint but `inproc://` needs keys, or
    /// an explicit `insecure`.
    func authentication(endpoint: String, secretKey: String?, insecure: Bool) throws -> CoordinatorAuthentication? {
        let sources = sources()
        switch (secretKey, sources.isEmpty) {
        case (nil, true):
            if insecure || endpoint.hasPrefix("inproc://") { return nil }
            throw CommandError(
                "refusing to listen on \(endpoint) without CurveZMQ: anyone who reaches it could submit batches, "
                    + "cancel them, or join as a worker. Create keys with `shiftwork keygen coordinator --out keys` and "
                    + "`shiftwork keygen NAME --out keys` for each worker and client, then start with "
                    + "`--secret-key keys/coordinator.key --allow-keys keys` (env SHIFTWORK_SECRET_KEY, SHIFTWORK_ALLOW_KEYS), "
                    + "or give each role its own list with --allow-workers, --allow-clients and --allow-admins; "
                    + "or, on a network you trust, opt out explicitly with --insecure (env SHIFTWORK_INSECURE=1).")
        case (_?, true):
            throw CommandError(
                "--secret-key needs an allow-list: --allow-keys (SHIFTWORK_ALLOW_KEYS) for keys with every "
                    + "role, or --allow-workers, --allow-clients, --allow-admins; each a directory of *.pub files or a file "
                    + "with one key per line")
        case (nil, false):
            let given = sources.map(\.option).joined(separator: ", ")
            throw CommandError(
                "\(given) needs --secret-key (SHIFTWORK_SECRET_KEY): the coordinator's own secret key; "
                    + "create it with `shiftwork keygen coordinator`")
        case (let secretKey?, false):
            if insecure {
                throw CommandError(
                    "--insecure (SHIFTWORK_INSECURE) contradicts --secret-key and the allow-lists: drop one or the other"
                )
            }
            SecretKeyFile.warnIfExposed(secretKey)
            let keyPair: CurveKeyPair
            do {
                keyPair = try CurveKeyPair.load(secretKeyFile: secretKey)
            } catch let error as CurveKeyError {
                throw CommandError("--secret-key (SHIFTWORK_SECRET_KEY): \(error.description)")
            }
            do {
                return CoordinatorAuthentication(
                    keyPair: keyPair, roles: try AccessRoles.load(sources), sources: sources)
            } catch let error as CurveKeyError {
                throw CommandError(Self.namingTheVariable(error.description))
            }
        }
    }

    /// An allow-list error (`--allow-keys: the allow-list … does not exist …`) with the option's variable after
    /// its name (`--allow-keys (SHIFTWORK_ALLOW_KEYS): …`): in a container the variable is what was set.
    static func namingTheVariable(_ message: String) -> String {
        let variables = [
            "--allow-keys": "ALLOW_KEYS", "--allow-workers": "ALLOW_WORKERS",
            "--allow-clients": "ALLOW_CLIENTS", "--allow-admins": "ALLOW_ADMINS",
        ]
        for (option, variable) in variables where message.hasPrefix("\(option):") {
            return "\(option) (SHIFTWORK_\(variable))" + message.dropFirst(option.count)
        }
        return message
    }
}
