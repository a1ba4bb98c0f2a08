import Foundation

/// Checks on the secret key files given to commands.
enum SecretKeyFile {
    /// Warns on standard error when `path` can be read or written by users other than its owner
    /// (`shiftwork keygen` writes it with mode 0600).
    static func warnIfExposed(_ path: String) {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
            let mode = (attributes[.posixPermissions] as? NSNumber)?.intValue, mode & 0o077 != 0
        else { return }
        let octal = String(mode & 0o777, radix: 8)
        FileHandle.standardError.write(
            Data(
                "warning: the secret key file \(path) is accessible to other users (mode \(octal)): run `chmod 600 \(path)`\n"
                    .utf8))
    }
}
