import ArgumentParser
import Cluster
import Foundation
import Glibc
import Messaging

/// `shiftwork submit`: sends a batch to a running coordinator and writes the outputs as they arrive.
struct SubmitCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "submit",
        abstract: "Send a batch of images to a coordinator and write the results into a directory.",
        discussion:
            "Workers fetch URLs themselves; local files and directories are uploaded: their bytes go to the coordinator when it asks for them (--shared-disk sends their paths instead, for workers started with --allow-local-files that share this disk). '-' reads the inputs from standard input, one a line. A directory's folders are kept under --out or the sink (--flat: all at the top)."
    )

    @Option(help: "Seconds to wait for the coordinator to accept the batch (env SHIFTWORK_TIMEOUT; default 10).")
    var timeout: Int?

    @Flag(
        help:
            "Print the batch's ID once the coordinator has accepted the batch (with local files: once their bytes are in its data directory), and exit 0 without waiting for its items; `status`, `results` and `retry` take it up later (`results`, and local files, need a coordinator with --data-dir)."
    )
    var detach = false

    @Flag(
        help:
            "Send local files' paths instead of their bytes: for workers started with --allow-local-files that read the same disk as this client (a shared mount)."
    )
    var sharedDisk = false

    @OptionGroup var coordinator: CoordinatorEndpointOption
    @OptionGroup var batch: BatchOptions
    @OptionGroup var sharing: SharingOptions
    @OptionGroup var logging: LoggingOptions

    func run() async throws {
        _ = try logging.makeLogger(label: "shiftwork.submit", defaultLevel: .warning)
        let reporter = BatchReporter(json: batch.json)
        var submission = try sharing.applied(to: await batch.submission(readingLocalLists: !sharedDisk))
        submission.uploadsLocalFiles = !sharedDisk
        let timeout = try Environment.resolve(timeout, "TIMEOUT", default: 10)
        if detach {
            try await withCoordinator(coordinator, responseTimeout: .seconds(timeout)) { client in
                let (batchID, count, attached) = try await submission.detach(with: client)
                let id = PrintableText.escape(batchID)
                if batch.json {
                    print(
                        JSONValue.object([
                            ("batch", .string(batchID)), ("items", .integer(count)),
                            ("attached", .bool(attached)), ("detached", .bool(true)),
                        ]).text)
                } else {
                    let note = attached ? " (attached: submitted before with this --key; no second batch was made)" : ""
                    print(
                        "batch \(id): \(count) item\(count == 1 ? "" : "s") accepted\(note); detached: `shiftwork status \(id)` follows it, `shiftwork results \(id) --out DIR` fetches its outputs"
                    )
                }
                fflush(nil)
            }
            return
        }
        // The summary is printed as soon as the last result is in, before the client closes its socket and
        // ends its ZeroMQ context (a few thread hand-offs, which a script reading the output need not wait for).
        let allSucceeded = try await withCoordinator(coordinator, responseTimeout: .seconds(timeout)) { client in
            reporter.summarize(try await submission.run(with: client, progress: { reporter.report($0) }))
        }
        if !allSucceeded { throw ExitCode(1) }
    }
}
