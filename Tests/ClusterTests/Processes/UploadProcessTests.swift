import Foundation
import Imaging
import ShiftworkTestSupport
import XCTest

/// `shiftwork submit` of local files to a coordinator whose workers do not read the client's disk (no
/// `--allow-local-files`): the files' bytes are uploaded (docs/protocol.md, "Uploads"). Real processes,
/// loopback only.
final class UploadProcessTests: ClusterTestCase {
    /// `count` JPEGs of distinct widths under `folder`, every third one in a subfolder; `padding` bytes
    /// after each image's end (a decoder stops at the end of the image) make files of a chosen size.
    private func makePhotos(_ count: Int, in folder: String = "photos", padding: Int = 0) throws -> (URL, [String]) {
        let photos = harness.scratch.appendingPathComponent(folder)
        var names: [String] = []
        for index in 0..<count {
            let name = index % 3 == 2 ? String(format: "trip/%02d.jpg", index) : String(format: "%02d.jpg", index)
            let url = photos.appendingPathComponent(name)
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            let image = try SyntheticImages.make(width: 40 + index, height: 30, format: .jpeg, seed: UInt64(index + 1))
            try Data(image + [UInt8](repeating: 0, count: padding)).write(to: url)
            names.append(name)
        }
        return (photos, names)
    }

    private func assertOutputs(
        _ names: [String], in out: URL, file: StaticString = #filePath, line: UInt = #line
    )
        throws
    {
        for (index, name) in names.enumerated() {
            let bytes = [UInt8](try Data(contentsOf: out.appendingPathComponent(name)))
            XCTAssertEqual(try ImageCodec.decode(bytes).image.width, 40 + index, name, file: file, line: line)
        }
    }

    private func batchID(of process: ManagedProcess) async throws -> String {
        let line = await process.waitForLine { $0.hasPrefix("batch b-") }
        return String(try XCTUnwrap(line?.split(separator: " ")[1].dropLast(), "no batch ID:\n\(process.outputText)"))
    }

    private func itemStates(_ status: [String: Any]) -> [String] {
        (status.objects("batches").first?.objects("item_states") ?? []).map { ($0["state"] as? String) ?? "?" }
    }

    func testAFolderOfTwelvePhotosIsUploadedToAWorkerThatReadsNoLocalFiles() async throws {
        let (photos, names) = try makePhotos(12)
        let endpoint = try await harness.startCoordinator()
        // No --allow-local-files, and a working directory of its own: the worker cannot read the photos.
        let elsewhere = harness.scratch.appendingPathComponent("worker-cwd")
        try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
        let worker = try ManagedProcess(
            "worker", executable: ShiftworkBinary.url,
            arguments: ["worker", "--slots", "2", "--worker-id", "upload-worker", "--coordinator", endpoint],
            currentDirectory: elsewhere)  // stopped below, or killed by its deinit when the test fails first
        let out = harness.scratch.appendingPathComponent("out")
        let (status, output) = try await harness.run(
            ["submit", photos.path, "--out", out.path, "--coordinator", endpoint], timeout: .seconds(120))
        XCTAssertEqual(status, 0, "\(output)\n\(worker.outputText)")
        XCTAssertTrue(output.contains("12 items: 12 succeeded, 0 failed"), output)
        try assertOutputs(names, in: out)  // the folders are kept: trip/02.jpg comes back as trip/02.jpg
        _ = await worker.stop()
    }

    func testAFileOverTheUploadLimitIsRefusedBeforeAnythingIsSent() async throws {
        let (photos, _) = try makePhotos(1)
        let big = photos.appendingPathComponent("big.jpg")
        try Data(try SyntheticImages.make(width: 40, height: 30, format: .jpeg, seed: 9)).write(to: big)
        let handle = try FileHandle(forWritingTo: big)
        try handle.truncate(atOffset: 101 << 20)  // sparse: 101 MiB, one more than a worker accepts
        try handle.close()
        let endpoint = try await harness.startCoordinator()
        let (status, output) = try await harness.run(
            [
                "submit", big.path, "--out", harness.scratch.appendingPathComponent("out").path, "--coordinator",
                endpoint,
            ])
        XCTAssertNotEqual(status, 0, output)
        XCTAssertTrue(output.contains("\(big.path) is 101 MiB, more than the 100 MiB a worker accepts"), output)
        let cluster = try await harness.status(endpoint)
        XCTAssertEqual(cluster.objects("batches").count, 0, "nothing was sent: \(cluster)")
    }

    /// The coordinator's window holds one file at a time and no worker runs yet: the first file is
    /// uploaded, the others wait to be asked for. One of them changes meanwhile: that item fails, naming it.
    func testAFileChangedBetweenSubmitAndUploadFailsThatItemOnly() async throws {
        let (photos, names) = try makePhotos(3, padding: 700 << 10)
        let endpoint = try await harness.startCoordinator(["--upload-window-mb", "1"])
        let out = harness.scratch.appendingPathComponent("out")
        let submit = try harness.launch(
            "submit", ["submit", photos.path, "--out", out.path, "--coordinator", endpoint])
        let batch = try await batchID(of: submit)
        try await harness.waitForStatus(endpoint, batch: batch) { status in
            self.itemStates(status) == ["queued", "awaiting upload", "awaiting upload"]
        }
        let changed = photos.appendingPathComponent(names[1])
        let handle = try FileHandle(forWritingTo: changed)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data([1]))
        try handle.close()
        try harness.startWorker("worker", endpoint: endpoint)
        let status = await submit.waitForExit(timeout: .seconds(120))
        XCTAssertEqual(status, 1, "one item failed:\n\(harness.allOutput)")
        XCTAssertTrue(submit.outputText.contains("3 items: 2 succeeded, 1 failed"), submit.outputText)
        XCTAssertTrue(
            submit.outputText.contains("\(changed.path) changed since it was submitted"), submit.outputText)
        try assertOutputs([names[0]], in: out)
        XCTAssertTrue(FileManager.default.fileExists(atPath: out.appendingPathComponent(names[2]).path))
    }

    /// The client is killed with files still to upload (12 files of 4 MiB, asked one at a time, each synced
    /// to the spool before the next is asked; the kill comes as soon as the batch is accepted); its items wait,
    /// never failed, and the same submission sent again with its key attaches and sends what is missing.
    func testAClientKilledMidUploadLeavesItsBatchForSubmitKeyToFinish() async throws {
        let (photos, names) = try makePhotos(12, padding: 4 << 20)
        let data = harness.scratch.appendingPathComponent("data")
        let endpoint = try await harness.startCoordinator(["--upload-window-mb", "1", "--data-dir", data.path])
        let out = harness.scratch.appendingPathComponent("out")
        let arguments = ["submit", photos.path, "--key", "holiday", "--out", out.path, "--coordinator", endpoint]
        let first = try harness.launch("submit-1", arguments)
        let batch = try await batchID(of: first)
        await first.kill9()
        let waiting = try await harness.status(endpoint, batch: batch)
        XCTAssertTrue(
            itemStates(waiting).contains("awaiting upload"), "killed mid-upload: \(itemStates(waiting))")
        XCTAssertFalse(itemStates(waiting).contains("failed"), "the items wait, never failed")
        let second = try harness.launch("submit-2", arguments)
        try harness.startWorker("worker", endpoint: endpoint)
        let status = await second.waitForExit(timeout: .seconds(120))
        XCTAssertEqual(status, 0, harness.allOutput)
        XCTAssertTrue(second.outputText.contains("12 items: 12 succeeded, 0 failed"), second.outputText)
        try assertOutputs(names, in: out)
    }

    func testSubmitDetachReturnsOnceTheBytesAreSpooledAndResultsFetchesTheOutputs() async throws {
        let (photos, names) = try makePhotos(4)
        let data = harness.scratch.appendingPathComponent("data")
        let endpoint = try await harness.startCoordinator(["--data-dir", data.path])
        let (status, output) = try await harness.run(
            ["submit", "--detach", photos.path, "--coordinator", endpoint], timeout: .seconds(60))
        XCTAssertEqual(status, 0, output)
        let batch = String(
            try XCTUnwrap(
                output.split(separator: "\n").first { $0.hasPrefix("batch b-") }?.split(separator: " ")[1]
                    .dropLast(), output))
        // The client is gone; the spool holds the bytes. A worker comes and runs them.
        try harness.startWorker("worker", endpoint: endpoint)
        try await harness.waitForStatus(endpoint, batch: batch, timeout: .seconds(60)) { status in
            status.objects("batches").first?.int("succeeded") == 4
        }
        let out = harness.scratch.appendingPathComponent("out")
        let (fetched, fetchedOutput) = try await harness.run(
            ["results", batch, "--out", out.path, "--coordinator", endpoint], timeout: .seconds(60))
        XCTAssertEqual(fetched, 0, fetchedOutput)
        try assertOutputs(names, in: out)
        let spool = data.appendingPathComponent("uploads").appendingPathComponent(batch)
        XCTAssertFalse(FileManager.default.fileExists(atPath: spool.path), "released once the items finished")
    }

    func testDetachWithLocalFilesIsRefusedByACoordinatorWithoutADataDirectory() async throws {
        let (photos, _) = try makePhotos(1)
        let endpoint = try await harness.startCoordinator()
        let (status, output) = try await harness.run(["submit", "--detach", photos.path, "--coordinator", endpoint])
        XCTAssertNotEqual(status, 0, output)
        XCTAssertTrue(
            output.contains("--detach with local files needs a coordinator that keeps uploads on disk"), output)
    }

    private func startCoordinator(_ name: String, endpoint: String, _ extra: [String]) async throws -> ManagedProcess {
        let coordinator = try harness.launch(
            name, ["coordinator", "--listen", endpoint, "--insecure", "--worker-timeout", "2"] + extra)
        guard await coordinator.waitForLine(where: { $0.contains("listening on") }) != nil else {
            throw HarnessError("\(name) did not start:\n\(coordinator.outputText)")
        }
        return coordinator
    }

    /// A worker holds two items' assignments but is stopped (SIGSTOP, so it cannot run them), then killed:
    /// the coordinator sends the same bytes again to another worker, and every item is written once.
    func testAWorkerKilledMidBatchHasItsItemsRunAgainFromTheBytesTheCoordinatorHolds() async throws {
        let (photos, names) = try makePhotos(4)
        let endpoint = "tcp://127.0.0.1:\(try freeLoopbackPort())"
        _ = try await startCoordinator("coordinator", endpoint: endpoint, [])
        let doomed = try harness.startWorker("doomed", endpoint: endpoint, slots: 2)
        try await harness.waitForStatus(endpoint) { $0.objects("workers").count == 1 }
        kill(doomed.pid, SIGSTOP)
        let out = harness.scratch.appendingPathComponent("out")
        let submit = try harness.launch(
            "submit", ["submit", photos.path, "--out", out.path, "--coordinator", endpoint])
        let batch = try await batchID(of: submit)
        try await harness.waitForStatus(endpoint, batch: batch) { status in
            self.itemStates(status).filter { $0 == "running" }.count == 2
        }
        await doomed.kill9()
        try harness.startWorker("survivor", endpoint: endpoint, slots: 2)
        let status = await submit.waitForExit(timeout: .seconds(120))
        XCTAssertEqual(status, 0, harness.allOutput)
        XCTAssertTrue(submit.outputText.contains("4 items: 4 succeeded, 0 failed"), submit.outputText)
        try assertOutputs(names, in: out)
        let written = try FileManager.default.subpathsOfDirectory(atPath: out.path).filter { $0.hasSuffix(".jpg") }
        XCTAssertEqual(written.sorted(), names.sorted(), "every item written once")
        let items = try await harness.status(endpoint, batch: batch).objects("batches").first?.objects("item_states")
        let lost = (items ?? []).flatMap { $0.objects("failed_attempts") }.map { $0["code"] as? String }
        XCTAssertEqual(lost, ["worker-lost", "worker-lost"], "the two held by the killed worker ran again")
    }

    /// Every file is in the spool when the coordinator is killed; one spool file is then lost. The restarted
    /// coordinator reads the others back, and asks the client (still running, re-attached) for the lost one.
    func testACoordinatorKilledAndRestartedAsksTheClientAgainForWhatItLost() async throws {
        let (photos, names) = try makePhotos(4)
        let endpoint = "tcp://127.0.0.1:\(try freeLoopbackPort())"
        let data = harness.scratch.appendingPathComponent("data")
        let first = try await startCoordinator("coordinator-1", endpoint: endpoint, ["--data-dir", data.path])
        let out = harness.scratch.appendingPathComponent("out")
        let submit = try harness.launch(
            "submit", ["submit", photos.path, "--out", out.path, "--coordinator", endpoint])
        let batch = try await batchID(of: submit)
        try await harness.waitForStatus(endpoint, batch: batch) { status in
            self.itemStates(status) == ["queued", "queued", "queued", "queued"]
        }
        await first.kill9()
        let spool = data.appendingPathComponent("uploads").appendingPathComponent(batch)
        let files = try FileManager.default.contentsOfDirectory(atPath: spool.path).filter { !$0.hasPrefix(".") }
        XCTAssertEqual(files.count, 4, "\(files)")
        let lost = try XCTUnwrap(files.first { $0.hasPrefix("2-") })
        try FileManager.default.removeItem(at: spool.appendingPathComponent(lost))

        _ = try await startCoordinator("coordinator-2", endpoint: endpoint, ["--data-dir", data.path])
        try harness.startWorker("worker", endpoint: endpoint)
        let status = await submit.waitForExit(timeout: .seconds(120))
        XCTAssertEqual(status, 0, "the client rides through the restart and sends the lost file:\n\(harness.allOutput)")
        XCTAssertTrue(submit.outputText.contains("4 items: 4 succeeded, 0 failed"), submit.outputText)
        try assertOutputs(names, in: out)
    }

    /// `--shared-disk` sends paths, as before uploads: workers with `--allow-local-files` read them, others
    /// refuse them, item by item.
    func testSharedDiskSendsPathsForWorkersThatReadTheSameDisk() async throws {
        let (photos, names) = try makePhotos(2)
        let endpoint = try await harness.startCoordinator()
        let reader = try harness.launch(
            "reader", ["worker", "--slots", "2", "--allow-local-files", "--coordinator", endpoint])
        let out = harness.scratch.appendingPathComponent("out")
        let (status, output) = try await harness.run(
            ["submit", "--shared-disk", photos.path, "--out", out.path, "--coordinator", endpoint])
        XCTAssertEqual(status, 0, output)
        try assertOutputs(names, in: out)
        _ = await reader.stop()

        try harness.startWorker("no-local-files", endpoint: endpoint)
        let (refused, refusedOutput) = try await harness.run(
            ["submit", "--shared-disk", photos.path, "--out", out.path, "--coordinator", endpoint])
        XCTAssertEqual(refused, 1, refusedOutput)
        XCTAssertTrue(refusedOutput.contains("2 items: 0 succeeded, 2 failed"), refusedOutput)
    }

    /// Items cancelled before their files were uploaded run again with `retry`: the retrying client, on the
    /// same machine, is asked for the files and sends them.
    func testRetryOfCancelledUploadItemsSendsTheirFilesAgain() async throws {
        let (photos, names) = try makePhotos(3, padding: 700 << 10)
        let endpoint = try await harness.startCoordinator(["--upload-window-mb", "1"])
        let submit = try harness.launch(
            "submit",
            [
                "submit", photos.path, "--out", harness.scratch.appendingPathComponent("first").path, "--coordinator",
                endpoint,
            ])
        let batch = try await batchID(of: submit)
        try await harness.waitForStatus(endpoint, batch: batch) { status in
            self.itemStates(status) == ["queued", "awaiting upload", "awaiting upload"]
        }
        let (cancelled, cancelOutput) = try await harness.run(["cancel", batch, "--coordinator", endpoint])
        XCTAssertEqual(cancelled, 0, cancelOutput)
        let submitted = await submit.waitForExit(timeout: .seconds(60))
        XCTAssertEqual(submitted, 1, "its items were cancelled:\n\(submit.outputText)")
        try harness.startWorker("worker", endpoint: endpoint)
        let out = harness.scratch.appendingPathComponent("out")
        let (status, output) = try await harness.run(
            ["retry", batch, "--out", out.path, "--coordinator", endpoint], timeout: .seconds(120))
        XCTAssertEqual(status, 0, "\(output)\n\(harness.allOutput)")
        XCTAssertTrue(output.contains("3 succeeded, 0 failed"), output)
        try assertOutputs(names, in: out)
    }
}
