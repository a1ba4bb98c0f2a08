import Foundation
import XCTest

@testable import Fetching

/// `s3://` URLs, the HTTP URLs they become, and where credentials are found (without a server: the
/// requests themselves are tested against a real S3-compatible server in ClusterTests' `S3SinkTests`).
final class S3AddressingTests: XCTestCase {
    func testLocationsParseAndBecomePathStyleOrAWSURLs() throws {
        let prefix = try S3Location("s3://photos-2026/out")
        XCTAssertEqual(prefix.bucket, "photos-2026")
        XCTAssertEqual(prefix.appending("a b.jpg").description, "s3://photos-2026/out/a b.jpg")
        XCTAssertEqual(
            prefix.appending("a b.jpg").url(endpoint: "http://127.0.0.1:9000/", region: "eu-west-1"),
            "http://127.0.0.1:9000/photos-2026/out/a%20b.jpg")
        XCTAssertEqual(
            try S3Location("s3://b12/k").url(endpoint: nil, region: "eu-west-1"),
            "https://b12.s3.eu-west-1.amazonaws.com/k")
        XCTAssertEqual(try S3Location("s3://bucket").appending("x.png").key, "x.png")
        // An output name with folders (a library's tree) becomes a key below the prefix, each segment encoded.
        XCTAssertEqual(
            prefix.appending("2024/01/my photo #1.jpg").url(endpoint: "http://127.0.0.1:9000", region: "eu-west-1"),
            "http://127.0.0.1:9000/photos-2026/out/2024/01/my%20photo%20%231.jpg")
        for bad in ["s3://", "s3://UPPER/x", "s3://ab/x", "http://bucket/x"] {
            XCTAssertThrowsError(try S3Location(bad), bad)
        }
        XCTAssertEqual(try FetchSource("s3://bucket/key.jpg"), .s3(try S3Location("s3://bucket/key.jpg")))
    }

    func testCredentialsComeFromTheEnvironmentThenTheFileAndNeverShowTheSecret() throws {
        let fromEnvironment = try XCTUnwrap(
            S3Credentials.load(environment: [
                "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "very-secret",
                "AWS_REGION": "eu-central-1",
            ]))
        XCTAssertEqual(fromEnvironment.region, "eu-central-1")
        XCTAssertFalse(fromEnvironment.description.contains("very-secret"), fromEnvironment.description)
        XCTAssertFalse("\(fromEnvironment)".contains("EXAMPLE"), "the key is shown shortened only")

        let file = FileManager.default.temporaryDirectory.appendingPathComponent("credentials-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: file) }
        try """
        [default]
        aws_access_key_id = DEFAULTKEY
        aws_secret_access_key = default-secret
        # a comment
        [work]
        aws_access_key_id=WORKKEY
        aws_secret_access_key=work-secret
        aws_session_token = token
        """.write(to: file, atomically: true, encoding: .utf8)
        let work = try XCTUnwrap(
            S3Credentials.load(environment: ["AWS_SHARED_CREDENTIALS_FILE": file.path, "AWS_PROFILE": "work"]))
        XCTAssertEqual(work.accessKeyID, "WORKKEY")
        XCTAssertEqual(work.sessionToken, "token")
        XCTAssertEqual(work.region, "us-east-1")
        XCTAssertEqual(
            S3Credentials.load(environment: ["AWS_SHARED_CREDENTIALS_FILE": file.path])?.accessKeyID, "DEFAULTKEY")
        XCTAssertNil(
            S3Credentials.load(environment: ["AWS_SHARED_CREDENTIALS_FILE": file.path, "AWS_PROFILE": "none"]))
        XCTAssertNil(
            S3Credentials.load(environment: [
                "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent", "AWS_ACCESS_KEY_ID": "only-half",
            ]))
        XCTAssertTrue(S3Credentials.howToSet.contains("AWS_ACCESS_KEY_ID"))
    }
}
