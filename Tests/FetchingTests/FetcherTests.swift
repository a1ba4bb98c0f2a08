import Foundation
import Imaging
import ShiftworkTestSupport
import XCTest

@testable import Fetching

final class FetcherTests: XCTestCase {
    private var server: TestHTTPServer!
    private var fetcher: ImageFetcher!
    private var files: TestFiles!
    private var jpeg: [UInt8] = []

    override func setUp() async throws {
        server = try TestHTTPServer()
        files = try TestFiles()
        jpeg = files.jpeg
        fetcher = ImageFetcher(
            configuration: FetchConfiguration(
                readTimeout: .milliseconds(500), maxRedirects: 3, retries: 2, retryDelay: .milliseconds(20)))
    }

    override func tearDown() async throws {
        await fetcher.shutdown()
        server.shutdown()
        files.remove()
    }

    private func expectError(
        _ source: String, kind: ImagingError.Kind, file: StaticString = #filePath, line: UInt = #line,
        using fetcher: ImageFetcher? = nil
    ) async -> ImagingError? {
        do {
            _ = try await (fetcher ?? self.fetcher).fetch(source)
            XCTFail("expected an error for \(source)", file: file, line: line)
            return nil
        } catch let error as ImagingError {
            XCTAssertEqual(error.kind, kind, "\(error)", file: file, line: line)
            return error
        } catch {
            XCTFail("unexpected error \(error)", file: file, line: line)
            return nil
        }
    }

    func testAnUnsupportedSchemeSaysWhichAreSupported() async throws {
        for source in ["http+unix://%2Fvar%2Frun%2Fs.sock/a.jpg", "ftp://example.org/a.jpg", "s3.v2://bucket/a.jpg"] {
            let error = await expectError(source, kind: .download)
            XCTAssertTrue(
                error?.message.contains("unsupported URL scheme") ?? false, "\(source): \(String(describing: error))")
            XCTAssertTrue(
                error?.message.contains("use http, https, s3 or file") ?? false,
                "\(source): \(String(describing: error))")
        }
    }

    func testFetchesAnImageOverHTTP() async throws {
        server.serve(path: "/a.jpg", body: jpeg, contentType: "image/jpeg")
        let fetched = try await fetcher.fetch(server.url("/a.jpg"))
        XCTAssertEqual(fetched.data, jpeg)
        XCTAssertEqual(fetched.format, .jpeg)
    }

    func testFormatComesFromTheBytesNotTheName() async throws {
        let png = files.png
        server.serve(path: "/misnamed.jpg", body: png, contentType: "image/jpeg")
        let fetched = try await fetcher.fetch(server.url("/misnamed.jpg"))
        XCTAssertEqual(fetched.format, .png)
    }

    func testNotFoundSaysSo() async throws {
        let url = server.url("/missing.jpg")
        let error = await expectError(url, kind: .download)
        XCTAssertEqual(error?.message, "\(url): HTTP 404 Not Found")
        XCTAssertEqual(server.requestCount(path: "/missing.jpg"), 1, "a 4xx is never retried")
    }

    func testHTMLServedAsAnImageIsRejected() async throws {
        server.serve(path: "/page.jpg", body: files.html, contentType: "image/jpeg")
        let url = server.url("/page.jpg")
        let error = await expectError(url, kind: .decode)
        XCTAssertEqual(
            error?.message,
            "\(url): not a JPEG, PNG, WebP, AVIF, HEIC/HEIF, TIFF, GIF or BMP image (starts with '<!DO')")
    }

    func testFollowsRedirects() async throws {
        server.serve(path: "/final.jpg", body: jpeg, contentType: "image/jpeg")
        server.redirect(path: "/first", to: "/second")
        server.redirect(path: "/second", to: server.url("/final.jpg"))
        let fetched = try await fetcher.fetch(server.url("/first"))
        XCTAssertEqual(fetched.data, jpeg)
    }

    func testTooManyRedirects() async throws {
        for i in 0..<6 { server.redirect(path: "/r\(i)", to: "/r\(i + 1)") }
        let url = server.url("/r0")
        let error = await expectError(url, kind: .download)
        XCTAssertEqual(error?.message, "\(url): too many redirects (more than 3)")
    }

    func testRetriesTransientFailuresThenSucceeds() async throws {
        server.serveAfterFailures(path: "/flaky.jpg", failures: 2, body: jpeg, contentType: "image/jpeg")
        let fetched = try await fetcher.fetch(server.url("/flaky.jpg"))
        XCTAssertEqual(fetched.data, jpeg)
        XCTAssertEqual(server.requestCount(path: "/flaky.jpg"), 3)
    }

    func testGivesUpAfterTheRetries() async throws {
        server.serve(
            path: "/down.jpg", body: Array("down".utf8), contentType: "text/plain", status: .serviceUnavailable)
        let url = server.url("/down.jpg")
        let error = await expectError(url, kind: .download)
        XCTAssertEqual(error?.message, "\(url): HTTP 503 Service Unavailable (after 3 attempts)")
        XCTAssertEqual(server.requestCount(path: "/down.jpg"), 3)
    }

    func testSlowServerHitsTheReadTimeout() async throws {
        server.serveSlowly(
            path: "/slow.jpg", body: jpeg, contentType: "image/jpeg", chunkSize: 100, interval: .seconds(2))
        let noRetry = ImageFetcher(configuration: FetchConfiguration(readTimeout: .milliseconds(300), retries: 0))
        let url = server.url("/slow.jpg")
        let started = ContinuousClock.now
        let error = await expectError(url, kind: .download, using: noRetry)
        await noRetry.shutdown()
        XCTAssertTrue(error?.message.contains("read timeout") ?? false, "\(String(describing: error))")
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(2))
    }

    func testSlowButSteadyServerSucceeds() async throws {
        server.serveSlowly(
            path: "/steady.jpg", body: jpeg, contentType: "image/jpeg", chunkSize: 4096, interval: .milliseconds(20))
        let fetched = try await fetcher.fetch(server.url("/steady.jpg"))
        XCTAssertEqual(fetched.data, jpeg)
    }

    func testBodyLargerThanTheLimitIsAbandoned() async throws {
        let limited = ImageFetcher(configuration: FetchConfiguration(maxBytes: 4096, retries: 0))
        server.serve(path: "/big.jpg", body: jpeg, contentType: "image/jpeg")
        // Without a Content-Length announcing the size: streamed, and stopped past the limit.
        server.serveStreamed(
            path: "/big-stream.jpg", body: jpeg, contentType: "image/jpeg", chunkSize: 1000, interval: .milliseconds(5))
        let error = await expectError(server.url("/big.jpg"), kind: .limit, using: limited)
        XCTAssertTrue(error?.message.contains("FetchConfiguration.maxBytes") ?? false, "\(String(describing: error))")
        let streamed = await expectError(server.url("/big-stream.jpg"), kind: .limit, using: limited)
        XCTAssertEqual(
            streamed?.message,
            server.url("/big-stream.jpg") + ": the body is larger than the limit of 0.004 MiB; "
                + "raise it with --max-bytes or FetchConfiguration.maxBytes")
        await limited.shutdown()
    }

    func testConnectionRefusedIsADownloadError() async throws {
        let port = server.port
        server.shutdown()
        let url = "http://127.0.0.1:\(port)/gone.jpg"
        let error = await expectError(url, kind: .download)
        XCTAssertTrue(error?.message.hasPrefix(url) ?? false, "\(String(describing: error))")
    }

    func testLocalFilesOnlyWhenAllowed() async throws {
        let path = files.path("photo.jpg")
        let error = await expectError(path, kind: .download)
        XCTAssertTrue(error?.message.contains("not allowed") ?? false)
        let local = ImageFetcher(configuration: FetchConfiguration(allowLocalFiles: true))
        defer { Task { await local.shutdown() } }
        let byPath = try await local.fetch(path)
        XCTAssertEqual(byPath.data, jpeg)
        let byURL = try await local.fetch("file://" + path)
        XCTAssertEqual(byURL.format, .jpeg)
        let missing = await expectError("/nonexistent/x.jpg", kind: .download, using: local)
        XCTAssertEqual(missing?.message, "/nonexistent/x.jpg: no such file")
        _ = await expectError("ftp://example.invalid/x.jpg", kind: .download, using: local)
    }

    func testCancellationStopsADownloadMidTransfer() async throws {
        server.serveSlowly(
            path: "/endless.jpg", body: jpeg + [UInt8](repeating: 0, count: 100_000), contentType: "image/jpeg",
            chunkSize: 100, interval: .milliseconds(50))
        let fetcher = self.fetcher!
        let url = server.url("/endless.jpg")
        let task = Task { try await fetcher.fetch(url) }
        try await Task.sleep(for: .milliseconds(300))
        let started = ContinuousClock.now
        task.cancel()
        do {
            _ = try await task.value
            XCTFail("expected cancellation")
        } catch let error as ImagingError {
            XCTAssertEqual(error.kind, .cancelled)
        }
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(1))
    }

    func testServerHandlesConcurrentRequests() async throws {
        server.serve(path: "/a.jpg", body: jpeg, contentType: "image/jpeg")
        let fetcher = self.fetcher!
        let url = server.url("/a.jpg")
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<20 { group.addTask { try await fetcher.fetch(url).data.count } }
            for try await count in group { XCTAssertEqual(count, jpeg.count) }
        }
        XCTAssertEqual(server.requestCount(path: "/a.jpg"), 20)
    }

    func testABodyOfManyReceiveBuffersArrivesWhole() async throws {
        // Three and a bit of libcurl's receive buffers, every byte different from its neighbours.
        let count = CurlTransfer.receiveBufferBytes * 3 + 4_321
        var body = jpeg
        body += (0..<(count - body.count)).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 13) }
        server.serve(path: "/large.jpg", body: body, contentType: "image/jpeg")
        let fetched = try await fetcher.fetch(server.url("/large.jpg"))
        XCTAssertEqual(fetched.data.count, body.count)
        XCTAssertEqual(fetched.data, body)
    }

    func testAnAnnouncedBodyHasItsRoomAndItsPagesBeforeTheBytesArrive() throws {
        for capacity in [0, 1, 4_096, 1 << 20, CurlTransfer.populatedBodyBytes + 1] {
            var body = CurlTransfer.emptyBody(capacity: capacity)
            XCTAssertTrue(body.isEmpty)
            XCTAssertGreaterThanOrEqual(body.capacity, capacity)
            let before = body.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) }
            // A filled array, copied in at once: `repeatElement` appended a byte at a time, which unoptimised
            // took 10 s of CPU for the 32 MiB case (minutes of wall beside the other tests); the same bytes.
            body.append(contentsOf: [UInt8](repeating: 7, count: capacity))
            XCTAssertEqual(
                body.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) }, before,
                "\(capacity) bytes fit without moving the body")
        }
        // A megabyte's pages are mapped before a byte is written (mincore: resident), not one fault at a time.
        let body = CurlTransfer.emptyBody(capacity: 1 << 20)
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let residentPages = body.withUnsafeBufferPointer { buffer -> [UInt8] in
            let start = (Int(bitPattern: buffer.baseAddress) + page - 1) & ~(page - 1)
            let count = (Int(bitPattern: buffer.baseAddress) + (1 << 20) - start) / page
            var vector = [UInt8](repeating: 0, count: count)
            XCTAssertEqual(mincore(UnsafeMutableRawPointer(bitPattern: start), count * page, &vector), 0)
            return vector
        }
        XCTAssertGreaterThan(residentPages.count, 200)
        XCTAssertEqual(residentPages.filter { $0 & 1 == 0 }.count, 0, "every page of the body is mapped")
    }

    func testTheTransferThreadCarriesItsName() async throws {
        // Per-thread CPU figures (scripts/bench-data-path THREADS=1) and perf find the download loop by it.
        // A fetch first, so that this fetcher's loop runs whatever ran before.
        server.serve(path: "/a.jpg", body: jpeg, contentType: "image/jpeg")
        _ = try await fetcher.fetch(server.url("/a.jpg"))
        let tasks = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")
        let names = tasks.compactMap { try? String(contentsOfFile: "/proc/self/task/\($0)/comm", encoding: .utf8) }
            .map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        XCTAssertTrue(names.contains("shiftwork-http"), "threads: \(names.sorted())")
    }

    func testServesADirectory() async throws {
        server.serveDirectory(files.directory.path, at: "/files/")
        let fetched = try await fetcher.fetch(server.url("/files/photo.png"))
        XCTAssertEqual(fetched.format, .png)
        _ = await expectError(server.url("/files/../Package.swift"), kind: .download)
    }
}
