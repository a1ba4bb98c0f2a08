import ArgumentParser
import Foundation

/// Where the results of a batch the client did not submit now are written, how they are reported, and
/// how long to wait for the coordinator: shared by `results` and `retry`.
struct ResultOutputOptions: ParsableArguments {
    @Option(name: .customLong("out"), help: "Directory to write the outputs into (env SHIFTWORK_OUT; default ./shiftwork-out).")
    var outputDirectory: String?

    @Flag(help: "Replace files of the same name in the output directory (by default an output takes the next free name, x-2.jpg, and says so).")
    var overwrite = false

    @Flag(help: "Print one JSON document with every item's outcome at the end, instead of progress.")
    var json = false

    @Option(help: "Seconds to wait for the coordinator to answer (env SHIFTWORK_TIMEOUT; default 10).")
    var timeout: Int?

    /// The output directory (`--out`, else SHIFTWORK_OUT, else ./shiftwork-out).
    var directory: URL {
        URL(fileURLWithPath: Environment.resolve(outputDirectory, "OUT", default: "shiftwork-out"))
    }

    /// How long to wait for an answer (`--timeout`, else SHIFTWORK_TIMEOUT, else 10 s).
    func responseTimeout() throws -> Duration {
        .seconds(try Environment.resolve(timeout, "TIMEOUT", default: 10))
    }
}
