import ArgumentParser
import Cluster
import Foundation

/// The inputs, output directory, filter and report style of a batch: shared by `run` and `submit`.
struct BatchOptions: ParsableArguments {
    @Argument(help: "Images to process: http(s) or file URLs, paths, or directories (their JPEG and PNG images, recursively).")
    var inputs: [String]

    @Option(name: .customLong("out"), help: "Directory to write the outputs into (env SHIFTWORK_OUT; default ./shiftwork-out).")
    var outputDirectory: String?

    @Flag(help: "Replace files of the same name in the output directory (by default an output takes the next free name, x-2.jpg, and says so).")
    var overwrite = false

    @Flag(help: "Print one JSON document with every item's outcome at the end, instead of progress.")
    var json = false

    @OptionGroup var filter: FilterOptions

    /// The submission these options describe, validated, with directories expanded to their images; says
    /// on standard error what the directories held that is not an image.
    func submission() async throws -> BatchSubmission {
        let list = try await InputList.resolve(inputs)
        for note in list.notes {
            FileHandle.standardError.write(Data("shiftwork: \(PrintableText.escape(note))\n".utf8))
        }
        return BatchSubmission(
            inputs: list.sources,
            outputDirectory: URL(fileURLWithPath: Environment.resolve(outputDirectory, "OUT", default: "shiftwork-out")),
            parameters: try filter.parameters(), encoding: try filter.encoding(), overwrite: overwrite)
    }
}
