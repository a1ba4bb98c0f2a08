import Cluster
import Foundation
import Imaging
import Messaging
import ShiftworkTestSupport
import Wire
import XCTest

/// A photo library comes back as it went in (issue #29), with the real binary: `run DIR` and `submit DIR`
/// keep the directory's folders and the names' characters under `--out` (and in a directory sink), the same
/// inputs get the same outputs whatever order they finish in, `--flat` is the flat layout of before,
/// `submit -` reads its inputs from a pipe, `submit --detach` leaves the batch to `results`, and an
/// output name that would leave the output directory is refused.
final class LibraryTreeTests: ClusterTestCase {
    /// Every image's path in the library, and its width: each input has a width of its own, so an output's
    /// width says which input it was made from.
    private let library: [(path: String, width: Int, format: ImageFormat)] = [
        ("2024/01/IMG_0001.jpg", 40, .jpeg),
        ("2024/02/IMG_0001.jpg", 44, .jpeg),
        ("a/x.jpg", 48, .jpeg),
        ("a/x.png", 52, .png),
        ("b/c/x.jpg", 56, .jpeg),
        ("my photo #1 (copy).jpg", 60, .jpeg),
        ("Été/naïve ñ.png", 64, .png),
    ]

    /// Where each input's output goes with the tree layout (the extension is the output format's).
    private let treeOutputs: [String: Int] = [
        "2024/01/IMG_0001.jpg": 40, "2024/02/IMG_0001.jpg": 44, "a/x.jpg": 48, "a/x-2.png": 52,
        "b/c/x.jpg": 56, "my photo #1 (copy).jpg": 60, "Été/naïve ñ.png": 64,
    ]

    /// Where each goes with `--flat`: today's names, in the library's sorted order.
    private let flatOutputs: [String: Int] = [
        "IMG_0001.jpg": 40, "IMG_0001-2.jpg": 44, "x.jpg": 48, "x-2.png": 52, "x-3.jpg": 56,
        "my_photo__1__copy_.jpg": 60, "na_ve__.png": 64,
    ]

    private func makeLibrary(_ name: String = "Pictures") throws -> URL {
        let root = harness.scratch.appendingPathComponent(name)
        for (index, entry) in library.enumerated() {
            let url = root.appendingPathComponent(entry.path)
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(
                try SyntheticImages.make(width: entry.width, height: 32, format: entry.format, seed: UInt64(index + 1))
            )
            .write(to: url)
        }
        return root
    }

    /// Every file below `directory` (relative paths, hidden ones included) and its image's width.
    private func tree(_ directory: URL) throws -> [String: Int] {
        var found: [String: Int] = [:]
        let enumerator = FileManager.default.enumerator(atPath: directory.path)
        while let relative = enumerator?.nextObject() as? String {
            let url = directory.appendingPathComponent(relative)
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), !isDirectory.boolValue
            else { continue }
            found[relative] = (try? ImageCodec.decode([UInt8](Data(contentsOf: url))).image.width) ?? -1
        }
        return found
    }

    private func batchID(in output: String) throws -> String {
        String(
            try XCTUnwrap(
                output.split(separator: "\n").first { $0.hasPrefix("batch b-") }?
                    .split(separator: " ")[1].dropLast(), "no batch line:\n\(output)"))
    }

    func testRunKeepsTheTreeTheSameWayWhateverTheFinishingOrderAndFlatAsBefore() async throws {
        let pictures = try makeLibrary()
        let first = harness.scratch.appendingPathComponent("out-1")
        let (status, output) = try await harness.run(
            ["run", pictures.path, "--out", first.path, "--workers", "1", "--slots", "1"],
            timeout: .seconds(180))
        XCTAssertEqual(status, 0, output)
        XCTAssertEqual(try tree(first), treeOutputs, output)
        XCTAssertTrue(output.contains("ok      \(pictures.path)/b/c/x.jpg -> \(first.path)/b/c/x.jpg"), output)

        // Another finishing order (three workers of two slots): the same mapping.
        let second = harness.scratch.appendingPathComponent("out-2")
        let (again, againOutput) = try await harness.run(
            ["run", pictures.path, "--out", second.path, "--workers", "3", "--slots", "2"],
            timeout: .seconds(180))
        XCTAssertEqual(again, 0, againOutput)
        XCTAssertEqual(try tree(second), treeOutputs, againOutput)

        let flat = harness.scratch.appendingPathComponent("out-flat")
        let (flatStatus, flatOutput) = try await harness.run(
            ["run", pictures.path, "--out", flat.path, "--flat", "--workers", "2"],
            timeout: .seconds(180))
        XCTAssertEqual(flatStatus, 0, flatOutput)
        XCTAssertEqual(try tree(flat), flatOutputs, flatOutput)

        // `run -`: paths one a line (an empty line ignored), kept below the folder they share.
        let piped = harness.scratch.appendingPathComponent("out-piped")
        let script = "printf '%s\\n' \"$1/2024/01/IMG_0001.jpg\" '' \"$1/b/c/x.jpg\" | \"$0\" run - --out \"$2\""
        let pipe = try harness.launch(
            "printf | run -", executable: URL(fileURLWithPath: "/bin/sh"),
            ["-c", script, ShiftworkBinary.url.path, pictures.path, piped.path])
        let pipeStatus = await pipe.waitForExit(timeout: .seconds(180))
        XCTAssertEqual(pipeStatus, 0, pipe.outputText)
        XCTAssertTrue(pipe.outputText.contains(": 2 items"), pipe.outputText)
        XCTAssertEqual(try tree(piped), ["2024/01/IMG_0001.jpg": 40, "b/c/x.jpg": 56], pipe.outputText)
    }

    func testSubmitKeepsTheTreeFromADirectoryFromAPipeAndInADirectorySink() async throws {
        let pictures = try makeLibrary()
        let endpoint = try await harness.startCoordinator()
        for id in ["w1", "w2"] {
            _ = try harness.launch(
                id, ["worker", "--slots", "2", "--worker-id", id, "--allow-local-files", "--coordinator", endpoint])
        }
        let out = harness.scratch.appendingPathComponent("out")
        let (status, output) = try await harness.run(
            ["submit", pictures.path, "--out", out.path, "--coordinator", endpoint],
            timeout: .seconds(180))
        XCTAssertEqual(status, 0, "\(output)\n\(harness.allOutput)")
        XCTAssertEqual(try tree(out), treeOutputs, output)

        // `find … | shiftwork submit -`: files one a line keep their folders below the one they share.
        let piped = harness.scratch.appendingPathComponent("piped")
        let script = "cd \"$1\" && find . -type f | sort -r | \"$0\" submit - --out \"$2\" --coordinator \"$3\""
        let pipe = try harness.launch(
            "find | submit -", executable: URL(fileURLWithPath: "/bin/sh"),
            ["-c", script, ShiftworkBinary.url.path, pictures.path, piped.path, endpoint])
        let pipeStatus = await pipe.waitForExit(timeout: .seconds(180))
        XCTAssertEqual(pipeStatus, 0, "\(pipe.outputText)\n\(harness.allOutput)")
        XCTAssertTrue(pipe.outputText.contains(": 7 items"), pipe.outputText)
        // Sorted the other way round, so x.png comes before x.jpg in a/: the pipe's order decides.
        var reversed = treeOutputs
        reversed["a/x.png"] = 52
        reversed["a/x-2.jpg"] = 48
        reversed["a/x.jpg"] = nil
        reversed["a/x-2.png"] = nil
        XCTAssertEqual(try tree(piped), reversed, pipe.outputText)

        // A directory sink: the workers make the folders.
        let sink = harness.scratch.appendingPathComponent("shared")
        try FileManager.default.createDirectory(at: sink, withIntermediateDirectories: true)
        let (sinkStatus, sinkOutput) = try await harness.run(
            ["submit", pictures.path, "--sink", sink.path, "--coordinator", endpoint],
            timeout: .seconds(180))
        XCTAssertEqual(sinkStatus, 0, "\(sinkOutput)\n\(harness.allOutput)")
        XCTAssertEqual(try tree(sink), treeOutputs, sinkOutput)
    }

    func testDetachPrintsTheBatchAndResultsWritesTheTreeLater() async throws {
        let pictures = try makeLibrary()
        let endpoint = try await harness.startCoordinator([
            "--data-dir", harness.scratch.appendingPathComponent("state").path,
        ])
        _ = try harness.launch(
            "worker", ["worker", "--slots", "2", "--worker-id", "w", "--allow-local-files", "--coordinator", endpoint])
        let unused = harness.scratch.appendingPathComponent("not-written")
        let (status, output) = try await harness.run([
            "submit", "--detach", pictures.path, "--out", unused.path, "--coordinator", endpoint,
        ])
        XCTAssertEqual(status, 0, "\(output)\n\(harness.allOutput)")
        let batch = try batchID(in: output)
        XCTAssertTrue(output.contains("batch \(batch): 7 items accepted; detached"), output)
        XCTAssertFalse(output.contains(" ok "), "a detached submission waits for no item:\n\(output)")
        XCTAssertFalse(FileManager.default.fileExists(atPath: unused.path), "a detached submission writes nothing")

        let out = harness.scratch.appendingPathComponent("results")
        let (resultsStatus, resultsOutput) = try await harness.run(
            ["results", batch, "--out", out.path, "--coordinator", endpoint],
            timeout: .seconds(180))
        XCTAssertEqual(resultsStatus, 0, "\(resultsOutput)\n\(harness.allOutput)")
        XCTAssertEqual(try tree(out), treeOutputs, resultsOutput)

        let flat = harness.scratch.appendingPathComponent("results-flat")
        let (flatStatus, flatOutput) = try await harness.run([
            "results", batch, "--out", flat.path, "--flat", "--coordinator", endpoint,
        ])
        XCTAssertEqual(flatStatus, 0, flatOutput)
        XCTAssertEqual(try tree(flat), flatOutputs, flatOutput)
    }

    func testHostileOutputNamesAreRefusedByTheCoordinator() async throws {
        let endpoint = try await harness.startCoordinator()
        try await harness.withClient(endpoint) { client in
            // A NUL cannot cross the wire (protobuf-c's strings end at it: "a\u{0}b" arrives as "a"): other control
            // characters stand for it here; OutputTreeNamingTests refuses NUL itself.
            for name in [
                "../x", "a/../../x", "/etc/x", "bell\u{7}", "line\nbreak", String(repeating: "x", count: 10_000),
            ] {
                let submit = SubmitBatch(
                    requestID: UUID().uuidString,
                    items: [BatchItem(source: "https://127.0.0.1:1/a.jpg", outputName: name)])
                do {
                    for try await event in await client.submit(submit) {
                        XCTFail("\(name.prefix(20)) was not refused: \(event)")
                        break
                    }
                    XCTFail("\(name.prefix(20)): the stream ended without a refusal")
                } catch let error as ClusterClientError {
                    XCTAssertTrue("\(error)".contains("output_name"), "\(name.prefix(20)): \(error)")
                }
            }
            let status = try await harness.status(endpoint)
            XCTAssertEqual(status.objects("batches").count, 0, "\(status)")
        }
    }

    func testResultsWritesNothingOutsideTheOutputDirectoryWhateverTheCoordinatorNames() async throws {
        let context = try MessagingContext()
        let router = try await SocketChannel.open(
            context: context, kind: .router, bind: ["tcp://127.0.0.1:*"], name: "hostile")
        let endpoint = try XCTUnwrap(router.boundEndpoint)
        let out = harness.scratch.appendingPathComponent("out")
        let outside = harness.scratch.appendingPathComponent("outside")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(at: out.appendingPathComponent("link"), withDestinationURL: outside)
        let absolute = harness.scratch.appendingPathComponent("absolute").path
        let names = ["../escaped", absolute, "a/../../b", "link/x", ".hidden", "kept/inside é"]
        let jpeg = try SyntheticImages.make(width: 24, height: 16, format: .jpeg, seed: 5)
        let answering = Task {
            for await message in router.messages {
                guard message.count >= 2, let payload = message.last, let decoded = try? WireCodec.decode(payload)
                else { continue }
                var answers: [Message] = []
                switch decoded {
                case .statusRequest(let request):
                    answers = [
                        .statusReply(
                            StatusReply(
                                requestID: request.requestID,
                                batches: [
                                    BatchStatus(batchID: "b-1", itemCount: UInt32(names.count))
                                ]))
                    ]
                case .fetchResults(let request):
                    answers = [
                        .batchAccepted(
                            BatchAccepted(
                                requestID: request.requestID, batchID: "b-1",
                                itemCount: UInt32(names.count), coordinatorID: "c"))
                    ]
                    answers += names.enumerated().map { index, name in
                        .itemFinished(
                            ItemFinished(
                                batchID: "b-1", itemIndex: UInt32(index), outputName: name,
                                outcome: .output(TaskOutput(data: jpeg, mediaType: "image/jpeg"))))
                    }
                    answers.append(.batchFinished(BatchFinished(batchID: "b-1", succeeded: UInt32(names.count))))
                default:
                    continue
                }
                for answer in answers { router.send([message[0], WireCodec.encode(answer)]) }
            }
        }
        let (status, output) = try await harness.run(["results", "b-1", "--out", out.path, "--coordinator", endpoint])
        answering.cancel()
        await router.close()
        await context.terminate()
        XCTAssertEqual(status, 1, output)
        XCTAssertEqual(try tree(out), ["kept/inside é.jpg": 24], output)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: outside.path), [], output)
        XCTAssertFalse(
            FileManager.default.fileExists(atPath: harness.scratch.appendingPathComponent("escaped.jpg").path))
        XCTAssertFalse(FileManager.default.fileExists(atPath: absolute + ".jpg"))
        XCTAssertTrue(output.contains("6 items: 1 succeeded, 5 failed"), output)
        XCTAssertTrue(output.contains("output name 'link/x': \(out.path)/link is a symbolic link"), output)
    }

    func testAnUnreadableFileOrFolderIsNamedAndTheRestGoesOn() async throws {
        let pictures = try makeLibrary()
        let locked = pictures.appendingPathComponent("locked.jpg")
        try Data(try SyntheticImages.make(width: 30, height: 20, format: .jpeg, seed: 99)).write(to: locked)
        let lockedFolder = pictures.appendingPathComponent("private")
        try FileManager.default.createDirectory(at: lockedFolder, withIntermediateDirectories: true)
        try Data(try SyntheticImages.make(width: 30, height: 20, format: .jpeg, seed: 98)).write(
            to: lockedFolder.appendingPathComponent("p.jpg"))
        chmod(locked.path, 0)
        chmod(lockedFolder.path, 0)
        defer { chmod(lockedFolder.path, 0o755) }
        let out = harness.scratch.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        chmod(out.path, 0o777)
        // Root reads every file: the command runs as nobody (setpriv, util-linux) to meet the permissions.
        let asNobody = getuid() == 0
        let executable = asNobody ? URL(fileURLWithPath: "/usr/bin/setpriv") : ShiftworkBinary.url
        let prefix = asNobody ? ["--reuid=65534", "--regid=65534", "--clear-groups", ShiftworkBinary.url.path] : []
        chmod(harness.scratch.path, 0o755)
        let run = try harness.launch(
            "run", executable: executable, prefix + ["run", pictures.path, "--out", out.path],
            environment: ["HOME": "/tmp"])
        let status = await run.waitForExit(timeout: .seconds(180))
        let output = run.outputText
        XCTAssertEqual(status, 0, output)
        XCTAssertTrue(
            output.contains(
                "shiftwork: \(pictures.path): could not read 2 entries, left out (the other images go on): locked.jpg: permission denied, private/: permission denied"
            ), output)
        XCTAssertEqual(try tree(out), treeOutputs, output)
    }
}
