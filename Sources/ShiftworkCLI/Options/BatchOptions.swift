import ArgumentParser
import Cluster
import Fetching
import Foundation

/// The inputs, output directory, filter and report style of a batch: shared by `run` and `submit`.
struct BatchOptions: ParsableArguments {
    @Argument(
        help:
            "Images to process: http(s) or file URLs, paths, or directories (their images of every format read: JPEG, PNG, WebP, AVIF, HEIC, TIFF, GIF, BMP; recursively; the outputs keep their folders); '-' reads them from standard input, one a line."
    )
    var inputs: [String]

    @OptionGroup var output: OutputOptions
    /// `--json`: one JSON document at the end instead of progress.
    var json: Bool { output.json }

    @Option(
        help:
            "Where the workers write the outputs themselves: a directory every worker reaches (a shared volume), or s3://BUCKET/PREFIX; only their names, sizes and checksums come back (env SHIFTWORK_SINK). --out is then not used."
    )
    var sink: String?

    @Option(
        name: .customLong("s3-endpoint"),
        help:
            "The URL of an S3-compatible store for s3:// sinks and inputs, e.g. http://minio:9000 (env SHIFTWORK_S3_ENDPOINT; default: AWS). Credentials: the standard AWS_* variables or ~/.aws/credentials, on the workers."
    )
    var s3Endpoint: String?

    @OptionGroup var filter: FilterOptions
    @OptionGroup var retry: RetryOptions

    /// The submission these options describe, validated, with directories expanded to their images (and,
    /// with `readingLocalLists`, local lists of images to their entries: the client uploads their photos);
    /// says on standard error what the directories held that is not an image.
    func submission(readingLocalLists: Bool = false) async throws -> BatchSubmission {
        let list = try await InputList.resolve(inputs, readingLocalLists: readingLocalLists)
        for note in list.notes {
            FileHandle.standardError.write(Data("shiftwork: \(PrintableText.escape(note))\n".utf8))
        }
        var submission = BatchSubmission(
            inputs: list.sources,
            outputDirectory: output.directory,
            parameters: try filter.parameters(), encoding: try filter.encoding(), overwrite: output.overwrite)
        submission.pathsInDirectories = list.pathsInDirectories
        submission.layout = output.layout
        if let sink = Environment.resolve(sink, "SINK") {
            submission.sink = try SinkOption.validate(sink)
        }
        if let input = submission.inputs.first(where: S3Location.isS3) {
            try SinkOption.requireCredentials(for: input)
        }
        submission.s3Endpoint = Environment.resolve(s3Endpoint, "S3_ENDPOINT") ?? ""
        return try retry.applied(to: submission)
    }
}
