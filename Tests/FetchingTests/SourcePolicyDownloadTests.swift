import Foundation
import Imaging
import ShiftworkTestSupport
import XCTest

@testable import Fetching

/// The source policy on real connections: libcurl asks it about the resolved address of every connection
/// (`CURLOPT_OPENSOCKETFUNCTION`), first request and redirects alike, and a refused address never sees a
/// connection (a `ConnectionWitness` listening there counts none). Real HTTP servers on loopback addresses.
final class SourcePolicyDownloadTests: XCTestCase {
    private var server: TestHTTPServer!
    private var files: TestFiles!
    private let workerDefault = SourcePolicy.restricted()

    override func setUp() async throws {
        server = try TestHTTPServer()
        files = try TestFiles()
        server.serve(path: "/photo.jpg", body: files.jpeg, contentType: "image/jpeg")
    }

    override func tearDown() async throws {
        server.shutdown()
        files.remove()
    }

    private func configuration(_ policy: SourcePolicy) -> FetchConfiguration {
        var configuration = FetchConfiguration(retries: 0, retryDelay: .milliseconds(10))
        configuration.sourcePolicy = policy
        configuration.s3Credentials = S3Credentials.load(environment: [
            "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE",
            "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG",
        ])
        return configuration
    }

    /// One attempt at `source` under `policy`, expected to fail: the failure (which says whether to retry).
    private func refusal(
        _ source: String, _ policy: SourcePolicy, s3Endpoint: String? = nil,
        file: StaticString = #filePath, line: UInt = #line
    ) async -> DownloadFailure? {
        let fetcher = ImageFetcher(configuration: configuration(policy))
        defer { Task { await fetcher.shutdown() } }
        do {
            _ = try await fetcher.attempt(source, deadline: nil, s3Endpoint: s3Endpoint)
            XCTFail("\(source) was fetched", file: file, line: line)
        } catch let failure as DownloadFailure {
            return failure
        } catch {
            XCTFail("\(source): unexpected \(error)", file: file, line: line)
        }
        return nil
    }

    func testLoopbackInEverySpellingIsRefusedPermanentlyAndTheServerSeesNoConnection() async throws {
        let witness = try ConnectionWitness()
        let port = witness.port
        var refusedByCategory: [String: Int] = [:]
        for host in [
            "127.0.0.1", "localhost", "2130706433", "127.1", "0x7f.0.0.1", "0177.0.0.1", "0.0.0.0", "0",
            "[::ffff:127.0.0.1]", "[::1]", "[::]",
        ] {
            let url = "http://\(host):\(port)/photo.jpg"
            guard let failure = await refusal(url, workerDefault) else { continue }
            XCTAssertFalse(failure.isTransient, "a refusal is permanent: \(failure)")
            XCTAssertEqual(failure.error.kind, .download)
            XCTAssertTrue(failure.error.message.hasPrefix("\(url): refused: address "), failure.error.message)
            XCTAssertTrue(failure.error.message.contains("--allow-source-networks"), failure.error.message)
            let category = ["loopback", "unspecified"].first { failure.error.message.contains(" is \($0)") } ?? "other"
            refusedByCategory[category, default: 0] += 1
        }
        XCTAssertEqual(witness.connections(), 0, "no refused address saw a connection")
        XCTAssertEqual(refusedByCategory, ["loopback": 8, "unspecified": 3])
        print("source policy refusals by reason (spellings of this machine): \(refusedByCategory)")
    }

    func testTheMetadataAddressIsRefusedBeforeAnyConnection() async throws {
        // Nothing listens there on a test machine; a connection attempt would be a timeout, not this refusal.
        let failure = await refusal("http://169.254.169.254/latest/meta-data/iam/security-credentials/", workerDefault)
        XCTAssertEqual(failure?.isTransient, false)
        XCTAssertTrue(
            failure?.error.message.contains("address 169.254.169.254 is the cloud instance metadata service") == true,
            failure?.error.message ?? "")
        let v6 = await refusal("http://[fd00:ec2::254]/latest/meta-data/", workerDefault)
        XCTAssertTrue(v6?.error.message.contains("AWS's IPv6 address") == true, v6?.error.message ?? "")
    }

    func testARedirectToADeniedAddressIsRefusedAtTheRedirectAndTheTargetSeesNoConnection() async throws {
        let origin = try TestHTTPServer(host: "127.0.0.2")
        defer { origin.shutdown() }
        let witness = try ConnectionWitness()
        let target = witness.url("/inner.jpg")
        origin.redirect(path: "/outer.jpg", to: target)
        let policy = SourcePolicy.restricted(allowing: [try IPNetwork(parsing: "127.0.0.2/32")])
        let failure = await refusal(origin.url("/outer.jpg"), policy)
        XCTAssertEqual(failure?.isTransient, false)
        XCTAssertEqual(
            failure?.error.message,
            "\(origin.url("/outer.jpg")): redirected to \(target), refused: address 127.0.0.1 is "
                + "loopback (this machine), in 127.0.0.0/8, which this worker does not fetch from (source policy); to allow it, start the "
                + "worker with --allow-source-networks 127.0.0.1/32 or 127.0.0.0/8 (env SHIFTWORK_ALLOW_SOURCE_NETWORKS)"
        )
        XCTAssertEqual(origin.requestCount(path: "/outer.jpg"), 1, "the allowed origin was asked")
        XCTAssertEqual(witness.connections(), 0, "the denied target never saw a connection")
    }

    func testAllowedNetworksAdmitLoopbackAndARedirectIntoThem() async throws {
        let origin = try TestHTTPServer(host: "127.0.0.2")
        defer { origin.shutdown() }
        origin.redirect(path: "/outer.jpg", to: server.url("/photo.jpg"))
        let fetcher = ImageFetcher(
            configuration: configuration(.restricted(allowing: try IPNetwork.parseList("127.0.0.0/8,::1/128"))))
        let direct = try await fetcher.fetch(server.url("/photo.jpg"))
        let redirected = try await fetcher.fetch(origin.url("/outer.jpg"))
        let spelled = try await fetcher.fetch("http://2130706433:\(server.port)/photo.jpg")
        await fetcher.shutdown()
        XCTAssertEqual(direct.data, files.jpeg)
        XCTAssertEqual(redirected.data, files.jpeg)
        XCTAssertEqual(spelled.data, files.jpeg)
    }

    func testANameWithSeveralAddressesIsJudgedAddressByAddress() async throws {
        // localhost is 127.0.0.1 and ::1 (libcurl resolves it so itself): with only 127.0.0.0/8 allowed, ::1 is
        // never used and 127.0.0.1 is; with only ::1 allowed, 127.0.0.1 is never used and ::1, where nothing
        // listens, refuses the connection (a transient failure of the allowed address, not a refusal).
        let allowIPv4 = ImageFetcher(
            configuration: configuration(.restricted(allowing: [try IPNetwork(parsing: "127.0.0.0/8")])))
        let fetched = try await allowIPv4.fetch("http://localhost:\(server.port)/photo.jpg")
        await allowIPv4.shutdown()
        XCTAssertEqual(fetched.data, files.jpeg)
        let onlyIPv6 = await refusal(
            "http://localhost:\(server.port)/photo.jpg",
            .restricted(allowing: [try IPNetwork(parsing: "::1/128")]))
        // (Without IPv6 on the machine, libcurl has only 127.0.0.1 to try: then the policy refuses it.)
        let message = onlyIPv6?.error.message ?? ""
        XCTAssertTrue(
            message == "http://localhost:\(server.port)/photo.jpg: connection refused (is the server running?)"
                || message.contains("refused: address 127.0.0.1 is loopback"), message)
        XCTAssertEqual(server.requestCount(path: "/photo.jpg"), 1, "only the allowed fetch reached the server")
    }

    func testOperatorDeniedNetworksAreRefusedToo() async throws {
        let policy = SourcePolicy.restricted(
            allowing: try IPNetwork.parseList("127.0.0.0/8"),
            denying: try IPNetwork.parseList("127.0.0.1/32"))
        let failure = await refusal(server.url("/photo.jpg"), policy)
        XCTAssertTrue(
            failure?.error.message.contains("denied by --deny-source-networks") == true, failure?.error.message ?? "")
        XCTAssertEqual(server.requestCount(path: "/photo.jpg"), 0)
    }

    func testTheS3EndpointAndAnS3SinkGoThroughThePolicy() async throws {
        let witness = try ConnectionWitness()
        let failure = await refusal("s3://photos/in/a.jpg", workerDefault, s3Endpoint: witness.url(""))
        XCTAssertEqual(failure?.isTransient, false)
        XCTAssertTrue(failure?.error.message.hasPrefix("s3://photos/in/a.jpg: ") == true, failure?.error.message ?? "")
        XCTAssertTrue(
            failure?.error.message.contains("refused: address 127.0.0.1 is loopback") == true,
            failure?.error.message ?? "")
        let fetcher = ImageFetcher(configuration: configuration(workerDefault))
        do {
            try await fetcher.upload(
                files.jpeg, contentType: "image/jpeg", to: try S3Location("s3://photos/out/a.jpg"),
                endpoint: witness.url(""))
            XCTFail("the upload was made")
        } catch let error as S3Error {
            XCTAssertFalse(error.isTransient)
            XCTAssertTrue(error.description.contains("refused: address 127.0.0.1 is loopback"), error.description)
        }
        await fetcher.shutdown()
        XCTAssertEqual(witness.connections(), 0)
    }

    func testUnrestrictedFetchesFromLoopbackAndMasksCredentialsInItsMessages() async throws {
        let fetcher = ImageFetcher(configuration: configuration(.unrestricted))
        let fetched = try await fetcher.fetch(server.url("/photo.jpg"))
        XCTAssertEqual(fetched.data, files.jpeg)
        let secret =
            "http://alice:hunter2@127.0.0.1:\(server.port)/missing.jpg?X-Amz-Credential=AKIA&X-Amz-Signature=deadbeef"
        do {
            _ = try await fetcher.fetch(secret)
            XCTFail("a missing image was fetched")
        } catch let error as ImagingError {
            XCTAssertEqual(
                error.message,
                "http://alice:***@127.0.0.1:\(server.port)/missing.jpg?X-Amz-Credential=***&X-Amz-Signature=***: "
                    + "HTTP 404 Not Found")
        }
        await fetcher.shutdown()
    }
}
