import ArgumentParser
import Cluster
import Foundation

/// Where a batch's outputs are written and how its progress is reported: shared by `run`, `submit`,
/// `results` and `retry`.
struct OutputOptions: ParsableArguments {
    @Option(
        name: .customLong("out"),
        help: "Directory to write the outputs into (env SHIFTWORK_OUT; default ./shiftwork-out).")
    var outputDirectory: String?

    @Flag(
        help:
            "Replace files of the same name in the output directory (by default an output takes the next free name, x-2.jpg, and says so)."
    )
    var overwrite = false

    @Flag(
        help:
            "Write every output at the top of the output directory (or sink), named with A-Z a-z 0-9 . _ - only, x-2.jpg for a repeated name, instead of keeping a directory input's folders and the names' characters."
    )
    var flat = false

    @Flag(help: "Print one JSON document with every item's outcome at the end, instead of progress.")
    var json = false

    /// How the outputs are laid out: a directory input's folders kept (the default), or all at the top (`--flat`).
    var layout: OutputLayout { flat ? .flat : .tree }

    /// The output directory (`--out`, else SHIFTWORK_OUT, else ./shiftwork-out).
    var directory: URL {
        URL(fileURLWithPath: Environment.resolve(outputDirectory, "OUT", default: "shiftwork-out"))
    }
}
