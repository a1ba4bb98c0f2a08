import ArgumentParser
import Cluster
import Foundation

/// `shiftwork worker --sink-dir DIR` (env SHIFTWORK_SINK_DIR): the directory under which this worker writes
/// the sinks of batches (`submit --sink DIR/NAME`), usually a volume shared by every worker. Checked when the
/// worker starts, so that a volume that is not mounted (or not writable by the worker's user) stops the worker
/// at once with the setting's name, instead of failing every item of every batch with a sink.
struct SinkDirectoryOption: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "The directory this worker writes sinks under (a shared volume, e.g. /srv/shiftwork/outputs); checked at start: it must exist and be writable, else the worker exits (env SHIFTWORK_SINK_DIR; default: not checked).",
            valueName: "directory"))
    var sinkDir: String?

    /// Throws when a sink directory is given and is not a directory this process can write into.
    ///
    /// - Throws: `CommandError` naming the option, the variable and the path.
    func check() throws {
        guard let path = Environment.resolve(sinkDir, "SINK_DIR") else { return }
        let setting = "--sink-dir (SHIFTWORK_SINK_DIR) \(PrintableText.escape(path))"
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw CommandError("\(setting) does not exist: mount the shared sink volume there, or correct the path")
        }
        guard isDirectory.boolValue else {
            throw CommandError("\(setting) is not a directory: give the directory the shared sink volume is mounted on")
        }
        guard access(path, W_OK | X_OK) == 0 else {
            throw CommandError(
                "\(setting) is not writable by this worker (uid \(getuid())): give the volume to that user "
                    + "(e.g. Kubernetes' securityContext.fsGroup, or chown), or mount it read-write")
        }
    }
}
