import ArgumentParser
import Messaging

/// `--secret-key FILE` and `--coordinator-key FILE`: CurveZMQ for a worker or a client (`worker`,
/// `submit`, `status`, `cancel`). Both or neither; without them the connection is plain.
struct PeerKeyOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "This worker's or client's secret key, as `shiftwork keygen NAME` writes it into NAME.key (env SHIFTWORK_SECRET_KEY). Its NAME.pub must be on the coordinator's allow-list.",
            valueName: "file"))
    var secretKey: String?

    @Option(
        help: ArgumentHelp(
            "The coordinator's public key file (its NAME.pub; env SHIFTWORK_COORDINATOR_KEY). Needed with --secret-key.",
            valueName: "file"))
    var coordinatorKey: String?

    /// The CurveZMQ setting these options describe, or `nil` when neither is given.
    func security() throws -> CurveSecurity? {
        let secretPath = Environment.resolve(secretKey, "SECRET_KEY")
        let serverPath = Environment.resolve(coordinatorKey, "COORDINATOR_KEY")
        switch (secretPath, serverPath) {
        case (nil, nil):
            return nil
        case (_?, nil):
            throw ValidationError(
                "--secret-key needs --coordinator-key (SHIFTWORK_COORDINATOR_KEY): the coordinator's public key file, its NAME.pub"
            )
        case (nil, _?):
            throw ValidationError(
                "--coordinator-key needs --secret-key (SHIFTWORK_SECRET_KEY): this peer's own secret key file; create one with `shiftwork keygen NAME`"
            )
        case (let secretPath?, let serverPath?):
            SecretKeyFile.warnIfExposed(secretPath)
            // Each error names the setting it came from (option and variable): in a container the path is all
            // that is seen of a volume that is not mounted.
            let keyPair: CurveKeyPair
            do {
                keyPair = try CurveKeyPair.load(secretKeyFile: secretPath)
            } catch let error as CurveKeyError {
                throw CommandError("--secret-key (SHIFTWORK_SECRET_KEY): \(error.description)")
            }
            do {
                return .client(keyPair, serverKey: try CurvePublicKey.load(file: serverPath))
            } catch let error as CurveKeyError {
                throw CommandError("--coordinator-key (SHIFTWORK_COORDINATOR_KEY): \(error.description)")
            }
        }
    }
}
