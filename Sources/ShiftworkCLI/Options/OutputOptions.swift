import ArgumentParser
import Foundation

/// Where a batch's outputs are written and how its progress is reported: shared by `run`, `submit`,
/// `results` and `retry`.
struct OutputOptions: ParsableArguments {
    @Option(name: .customLong("out"), help: "Directory to write the outputs into (env SHIFTWORK_OUT; default ./shiftwork-out).")
    var outputDirectory: String?

    @Flag(help: "Replace files of the same name in the output directory (by default an output takes the next free name, x-2.jpg, and says so).")
    var overwrite = false

    @Flag(help: "Print one JSON document with every item's outcome at the end, instead of progress.")
    var json = false

    /// The output directory (`--out`, else SHIFTWORK_OUT, else ./shiftwork-out).
    var directory: URL {
        URL(fileURLWithPath: Environment.resolve(outputDirectory, "OUT", default: "shiftwork-out"))
    }
}
