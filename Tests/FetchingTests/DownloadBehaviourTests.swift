import Foundation
import Imaging
import ShiftworkTestSupport
import XCTest

@testable import Fetching

/// Download behaviours of the libcurl transport against a real HTTP server on 127.0.0.1: redirects to
/// other schemes, `Retry-After`, bodies without a size, the minimum rate, the total time limit, proxies.
final class DownloadBehaviourTests: XCTestCase {
    private var server: TestHTTPServer!
    private var files: TestFiles!

    override func setUp() async throws {
        server = try TestHTTPServer()
        files = try TestFiles()
    }

    override func tearDown() async throws {
        server.shutdown()
        files.remove()
    }

    /// Fetches `url` with `configuration`, expecting an `ImagingError` of `kind`; returns its message.
    private func failure(
        _ url: String, _ configuration: FetchConfiguration, kind: ImagingError.Kind = .download,
        file: StaticString = #filePath, line: UInt = #line
    ) async -> String {
        let fetcher = ImageFetcher(configuration: configuration)
        defer { Task { await fetcher.shutdown() } }
        do {
            _ = try await fetcher.fetch(url)
            XCTFail("expected an error for \(url)", file: file, line: line)
        } catch let error as ImagingError {
            XCTAssertEqual(error.kind, kind, error.message, file: file, line: line)
            return error.message
        } catch {
            XCTFail("unexpected error \(error)", file: file, line: line)
        }
        return ""
    }

    func testARedirectToAFileURLIsRefusedAndSaysWhy() async throws {
        server.redirect(path: "/sneaky.jpg", to: "file:///etc/passwd")
        let url = server.url("/sneaky.jpg")
        let message = await failure(url, FetchConfiguration())
        XCTAssertEqual(
            message,
            "\(url): redirected to file:///etc/passwd, which is not an http or https URL: refused "
                + "(only redirects to http and https are followed)")
        XCTAssertEqual(server.requestCount(path: "/sneaky.jpg"), 1, "a refused redirect is not retried")
    }

    func testUnavailableThenAvailableIsRetriedAfterTheServersRetryAfter() async throws {
        let busy = TestHTTPServer.Response.answer(
            status: .serviceUnavailable, headers: [("Retry-After", "1"), ("Content-Type", "text/plain")],
            body: Array("busy\n".utf8))
        server.serve(
            path: "/busy.jpg",
            response: .sequence(
                [busy], then: .content(status: .ok, contentType: "image/jpeg", body: files.jpeg)))
        let fetcher = ImageFetcher(configuration: FetchConfiguration(retries: 2, retryDelay: .milliseconds(10)))
        let started = ContinuousClock.now
        let fetched = try await fetcher.fetch(server.url("/busy.jpg"))
        let waited = ContinuousClock.now - started
        await fetcher.shutdown()
        XCTAssertEqual(fetched.data, files.jpeg)
        XCTAssertEqual(server.requestCount(path: "/busy.jpg"), 2)
        XCTAssertGreaterThanOrEqual(
            waited, .seconds(1), "the second attempt waits the Retry-After, not the 10 ms backoff")
    }

    func testARetryAfterLongerThanTheLongestRetryDelayIsClamped() async throws {
        let busy = TestHTTPServer.Response.answer(
            status: .tooManyRequests, headers: [("Retry-After", "3600")], body: Array("slow down\n".utf8))
        server.serve(
            path: "/throttled.jpg",
            response: .sequence(
                [busy], then: .content(status: .ok, contentType: "image/jpeg", body: files.jpeg)))
        let fetcher = ImageFetcher(
            configuration: FetchConfiguration(
                retries: 1, retryDelay: .milliseconds(10),
                maxRetryDelay: .milliseconds(200)))
        let fetched = try await fetcher.fetch(server.url("/throttled.jpg"))
        await fetcher.shutdown()
        XCTAssertEqual(fetched.data, files.jpeg, "429 is transient; the hour asked for is cut to 200 ms")
        XCTAssertEqual(server.requestCount(path: "/throttled.jpg"), 2)
    }

    func testOtherClientErrorsAreNotRetried() async throws {
        server.serve(path: "/forbidden.jpg", body: Array("no\n".utf8), contentType: "text/plain", status: .forbidden)
        let url = server.url("/forbidden.jpg")
        let message = await failure(url, FetchConfiguration(retries: 3, retryDelay: .milliseconds(10)))
        XCTAssertEqual(message, "\(url): HTTP 403 Forbidden")
        XCTAssertEqual(server.requestCount(path: "/forbidden.jpg"), 1)
    }

    func testABodyWithoutContentLengthUnderTheLimitIsKept() async throws {
        server.serveStreamed(
            path: "/unsized.png", body: files.png, contentType: "image/png", chunkSize: 500, interval: .milliseconds(1))
        let fetcher = ImageFetcher(configuration: FetchConfiguration())
        let fetched = try await fetcher.fetch(server.url("/unsized.png"))
        await fetcher.shutdown()
        XCTAssertEqual(fetched.data, files.png)
        XCTAssertEqual(fetched.format, .png)
    }

    func testATransferSlowerThanTheMinimumRateFailsAndSaysSo() async throws {
        // 100 bytes every 200 ms: 500 bytes/s, steady (never silent for long), below 2 KiB/s.
        server.serveSlowly(
            path: "/crawl.jpg", body: files.jpeg, contentType: "image/jpeg", chunkSize: 100,
            interval: .milliseconds(200))
        let url = server.url("/crawl.jpg")
        let message = await failure(
            url,
            FetchConfiguration(
                readTimeout: .seconds(10), minimumRate: 2048, minimumRateWindow: .seconds(1), retries: 0))
        XCTAssertTrue(message.hasPrefix("\(url): slower than the minimum rate of 2 KiB/s for 1.0 seconds"), message)
        XCTAssertTrue(message.contains("--min-download-rate"), message)
    }

    func testTheTotalTimeLimitCoversEveryAttempt() async throws {
        server.serve(path: "/stalled.jpg", response: .stall)
        let url = server.url("/stalled.jpg")
        // One attempt longer than the whole limit: cut by the limit, and not retried.
        let cut = await failure(
            url, FetchConfiguration(readTimeout: .seconds(30), totalTimeLimit: .seconds(1), retries: 3))
        XCTAssertEqual(
            cut,
            "\(url): not downloaded within the total time limit of 1.0 seconds (retries included); "
                + "raise it with --download-time-limit or FetchConfiguration.totalTimeLimit")
        XCTAssertEqual(server.requestCount(path: "/stalled.jpg"), 1)

        // Attempts that each fail (read timeout) and are retried, until the limit: the last attempt is cut
        // by it, or the next one would start too late; either way the message names the limit.
        server.serve(path: "/stalled-again.jpg", response: .stall)
        let again = server.url("/stalled-again.jpg")
        let stopped = await failure(
            again,
            FetchConfiguration(
                readTimeout: .milliseconds(300), totalTimeLimit: .seconds(1), retries: 10,
                retryDelay: .milliseconds(100)))
        XCTAssertTrue(stopped.hasPrefix(again + ": "), stopped)
        XCTAssertTrue(stopped.contains("total time limit of 1.0 seconds"), stopped)
        XCTAssertTrue(stopped.contains("--download-time-limit"), stopped)
        XCTAssertGreaterThan(
            server.requestCount(path: "/stalled-again.jpg"), 1, "the timeouts within the limit were retried")
        XCTAssertLessThan(server.requestCount(path: "/stalled-again.jpg"), 11, "the limit stopped the retries")
    }

    func testProxiesComeFromTheEnvironment() async throws {
        let proxy = try TestHTTPServer()
        defer { proxy.shutdown() }
        // A proxy receives the absolute URL as the request target.
        let url = "http://images.shiftwork-proxy-test.invalid/p.jpg"
        proxy.serve(path: url, body: files.jpeg, contentType: "image/jpeg")
        let saved = ["http_proxy", "no_proxy", "NO_PROXY"].map { ($0, ProcessInfo.processInfo.environment[$0]) }
        setenv("http_proxy", proxy.baseURL, 1)
        unsetenv("no_proxy")
        unsetenv("NO_PROXY")
        defer {
            for (name, value) in saved {
                if let value { setenv(name, value, 1) } else { unsetenv(name) }
            }
        }
        let fetcher = ImageFetcher(configuration: FetchConfiguration(retries: 0))
        let fetched = try await fetcher.fetch(url)
        await fetcher.shutdown()
        XCTAssertEqual(fetched.data, files.jpeg)
        XCTAssertEqual(proxy.requestCount(path: url), 1)
    }

    func testHTTPSToAServerWithAnUntrustedCertificateFailsAndSaysWhy() async throws {
        let openssl = URL(fileURLWithPath: "/usr/bin/openssl")
        guard FileManager.default.isExecutableFile(atPath: openssl.path) else {
            throw XCTSkip("needs the openssl tool")
        }
        let key = files.path("server.key")
        let certificate = files.path("server.crt")
        let generate = try ManagedProcess(
            "openssl req", executable: openssl,
            arguments: [
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", certificate, "-days", "1",
                "-subj", "/CN=127.0.0.1",
            ])
        let generated = await generate.waitForExit(timeout: .seconds(60))
        XCTAssertEqual(generated, 0, generate.outputText)
        // A real TLS server on 127.0.0.1 (offering HTTP/2 and HTTP/1.1) whose self-signed certificate no CA vouches for.
        let tls = try ManagedProcess(
            "openssl s_server", executable: openssl,
            arguments: [
                "s_server", "-accept", "127.0.0.1:0", "-cert", certificate, "-key", key, "-HTTP", "-alpn",
                "h2,http/1.1",
            ],
            currentDirectory: files.directory)
        let accepting = await tls.waitForLine { $0.hasPrefix("ACCEPT ") }
        let port = try XCTUnwrap(accepting?.split(separator: ":").last.map(String.init), tls.outputText)
        let url = "https://127.0.0.1:\(port)/photo.jpg"
        let message = await failure(url, FetchConfiguration(retries: 2, retryDelay: .milliseconds(10)))
        _ = await tls.stop(grace: .seconds(1))
        XCTAssertTrue(message.hasPrefix("\(url): the server's TLS certificate was not accepted ("), message)
        XCTAssertTrue(message.contains("self-signed certificate"), message)
        XCTAssertFalse(message.contains("attempts"), "a certificate that is not trusted is not retried: \(message)")
    }

    func testDownloadsFromOneHostDoNotWaitForEachOther() async throws {
        server.serve(path: "/stalled.jpg", response: .stall)
        let fetcher = ImageFetcher(configuration: FetchConfiguration(retries: 0))
        let url = server.url("/stalled.jpg")
        let downloads = (0..<3).map { _ in Task { try await fetcher.fetch(url) } }
        for _ in 0..<200 where server.requestCount(path: "/stalled.jpg") < 3 {
            try await Task.sleep(for: .milliseconds(25))
        }
        XCTAssertEqual(server.requestCount(path: "/stalled.jpg"), 3, "each download has a connection of its own")
        for download in downloads { download.cancel() }
        for download in downloads {
            do {
                _ = try await download.value
                XCTFail("a stalled download cannot succeed")
            } catch let error as ImagingError {
                XCTAssertEqual(error.kind, .cancelled)
            }
        }
        await fetcher.shutdown()
    }

    func testLocalFileReadsHonourTheLimit() async throws {
        let fetcher = ImageFetcher(configuration: FetchConfiguration(allowLocalFiles: true, maxBytes: 1000))
        defer { Task { await fetcher.shutdown() } }
        do {
            _ = try await fetcher.fetch(files.path("photo.jpg"))
            XCTFail("the file is larger than 1000 bytes")
        } catch let error as ImagingError {
            XCTAssertEqual(error.kind, .limit)
            XCTAssertTrue(error.message.hasPrefix(files.path("photo.jpg") + ": file is "), error.message)
        }
    }
}
