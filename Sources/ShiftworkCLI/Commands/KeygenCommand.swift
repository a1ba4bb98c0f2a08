import ArgumentParser
import Foundation
import Messaging

/// `shiftwork keygen NAME [--out DIR] [--force]`: writes a CurveZMQ key pair, NAME.key and NAME.pub.
struct KeygenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keygen",
        abstract: "Create a CurveZMQ key pair: NAME.key (secret, mode 0600) and NAME.pub (public).",
        discussion: """
            One pair for the coordinator, and one per worker or client (or one shared by a group of them). \
            The coordinator takes its NAME.key with --secret-key and the others' *.pub with --allow-keys; a \
            worker or client takes its own NAME.key with --secret-key and the coordinator's .pub with \
            --coordinator-key.
            """)

    @Argument(help: "The pair's name, e.g. coordinator, worker-1 or alice: the files are NAME.key and NAME.pub.")
    var name: String

    @Option(
        name: .customLong("out"), help: "Directory to write into (created if needed; default: the current directory).")
    var directory: String = "."

    @Flag(help: "Replace an existing pair of that name (peers that know the old public key are refused from then on).")
    var force = false

    func validate() throws {
        guard !name.isEmpty, !name.contains("/"), !name.hasPrefix(".") else {
            throw ValidationError(
                "NAME must be a plain file name without '/' and not starting with '.' (got '\(name)')")
        }
    }

    func run() throws {
        do {
            let pair = try CurveKeyPair.generate()
            let paths = try pair.write(name: name, into: directory, overwrite: force)
            print(
                "wrote \(paths.secretKey) (secret: keep it private) and \(paths.publicKey) (public key \(pair.publicKey))"
            )
        } catch let error as CurveKeyError {
            throw CommandError(error.description)
        }
    }
}
