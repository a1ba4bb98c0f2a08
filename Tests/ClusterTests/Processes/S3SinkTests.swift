import Foundation
import ShiftworkTestSupport
import XCTest

/// S3 sinks and sources against a real S3-compatible server on 127.0.0.1 (moto's server mode, from
/// scripts/setup-python), started and stopped by the test: workers upload each output with one signed PUT
/// and read `s3://` inputs with a signed GET; the coordinator and the client carry only metadata; the
/// credentials appear in no log, status or error; a missing bucket or a wrong key fails its items, not the
/// worker. The server checks every signature: after the requests that make the test's IAM user
/// (`INITIAL_NO_AUTH_ACTION_COUNT`), moto refuses requests that are not signed with its key.
final class S3SinkTests: ClusterTestCase {
    /// The IAM user's key, made by the server; the secret must never be printed by any process.
    private var credentials: [String: String] = [:]

    /// Starts moto's S3 server on a free loopback port, with signatures checked once the test's IAM user
    /// exists; returns its endpoint and the venv's Python.
    private func startS3() async throws -> (endpoint: String, python: URL) {
        let python = try await PythonEnvironment.shared.python()
        let server = try harness.launch(
            "moto", executable: python.deletingLastPathComponent().appendingPathComponent("moto_server"),
            ["-H", "127.0.0.1", "-p", "0"], environment: ["INITIAL_NO_AUTH_ACTION_COUNT": "3"])
        let line = await server.waitForLine(timeout: .seconds(60)) { $0.contains("Running on http://127.0.0.1:") }
        let endpoint = try XCTUnwrap(
            line?.components(separatedBy: "Running on ").last?
                .trimmingCharacters(in: .whitespaces), server.outputText)
        // The three unchecked requests: a user allowed everything on S3, and its key.
        let keyFile = harness.scratch.appendingPathComponent("s3-key")
        let made = try await boto(
            python, endpoint,
            """
            iam = boto3.client("iam", endpoint_url="\(endpoint)", region_name="us-east-1",
                               aws_access_key_id="setup", aws_secret_access_key="setup")
            iam.create_user(UserName="shiftwork")
            iam.put_user_policy(UserName="shiftwork", PolicyName="s3", PolicyDocument=json.dumps(
                {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}))
            key = iam.create_access_key(UserName="shiftwork")["AccessKey"]
            open("\(keyFile.path)", "w").write(key["AccessKeyId"] + " " + key["SecretAccessKey"])
            """, signed: false)
        // Read from a file: the test's own output must not hold the secret either.
        let fields = try String(contentsOf: keyFile, encoding: .utf8).split(separator: " ")
        guard fields.count == 2 else { throw HarnessError("no key from the S3 server:\n\(made)") }
        credentials = [
            "AWS_ACCESS_KEY_ID": String(fields[0]), "AWS_SECRET_ACCESS_KEY": String(fields[1]),
            "AWS_REGION": "us-east-1", "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent",
        ]
        return (endpoint, python)
    }

    private var secret: String { credentials["AWS_SECRET_ACCESS_KEY"] ?? "" }

    /// Runs `script` in the venv's Python with boto3 pointed at `endpoint`; returns its standard output.
    private func boto(_ python: URL, _ endpoint: String, _ script: String, signed: Bool = true) async throws -> String {
        let prelude = """
            import boto3, json, sys
            s3 = boto3.client("s3", endpoint_url="\(endpoint)", region_name="us-east-1")

            """
        let process = try harness.launch(
            "boto3", executable: python, ["-c", (signed ? prelude : "import boto3, json\n") + script],
            environment: credentials)
        let status = await process.waitForExit(timeout: .seconds(60))
        XCTAssertEqual(status, 0, process.outputText)
        return process.outputText
    }

    func testWorkersReadAndWriteS3AndNoCredentialShowsAnywhere() async throws {
        let (s3, python) = try await startS3()
        let input = try SyntheticImages.make(width: 96, height: 64, format: .jpeg, seed: 3)
        let inputFile = harness.scratch.appendingPathComponent("input.jpg")
        try Data(input).write(to: inputFile)
        _ = try await boto(
            python, s3,
            """
            s3.create_bucket(Bucket="shiftwork-in")
            s3.create_bucket(Bucket="shiftwork-out")
            s3.upload_file("\(inputFile.path)", "shiftwork-in", "photos/a.jpg")
            """)
        let (endpoint, metricsURL) = try await harness.startMeteredCoordinator(["--log-level", "debug"])
        _ = try harness.launch(
            "worker", ["worker", "--coordinator", endpoint, "--log-level", "debug"], environment: credentials)
        let http = try server.serveSyntheticImages(1, prefix: "s3")
        let (status, output) = try await harness.run(
            [
                "submit", "s3://shiftwork-in/photos/a.jpg", http[0], "--sink", "s3://shiftwork-out/results",
                "--s3-endpoint", s3,
                "--coordinator", endpoint,
            ], environment: credentials)
        XCTAssertEqual(status, 0, "\(output)\n\(harness.allOutput)")
        XCTAssertTrue(output.contains("-> s3://shiftwork-out/results/a.jpg"), output)
        XCTAssertTrue(output.contains("2 outputs were written by the workers into the sink"), output)

        // What the store holds: two whole images, under the names the summary gave.
        let listing = try await boto(
            python, s3,
            """
            objects = s3.list_objects_v2(Bucket="shiftwork-out", Prefix="results/")["Contents"]
            for o in objects:
                body = s3.get_object(Bucket="shiftwork-out", Key=o["Key"])["Body"].read()
                kind = "jpeg" if body[:3] == b"\\xff\\xd8\\xff" else "png" if body[:8] == b"\\x89PNG\\r\\n\\x1a\\n" else "other"
                print(o["Key"], o["Size"], len(body), kind)
            """)
        let lines = listing.split(separator: "\n").filter { $0.hasPrefix("results/") }
        XCTAssertEqual(lines.count, 2, listing)
        for line in lines {
            let fields = line.split(separator: " ")
            guard fields.count == 4 else {
                XCTFail(listing)
                continue
            }
            XCTAssertEqual(fields[1], fields[2], listing)
            XCTAssertNotEqual(fields[3], "other", listing)
            XCTAssertTrue(
                output.contains("s3://shiftwork-out/\(fields[0])"), "\(fields[0]) not in the summary:\n\(output)")
        }
        let page = try await TestHTTPClient.get(metricsURL).text
        for name in ["shiftwork_download_bytes_received_total", "shiftwork_output_bytes_received_total"] {
            XCTAssertTrue(page.contains("\n\(name) 0"), "\(name) must stay 0:\n\(page)")
        }

        // A bucket that does not exist fails its items, naming the sink; the worker serves on.
        let (missing, missingOutput) = try await harness.run(
            ["submit", http[0], "--sink", "s3://no-such-bucket/x", "--s3-endpoint", s3, "--coordinator", endpoint],
            environment: credentials)
        XCTAssertEqual(missing, 1, missingOutput)
        XCTAssertTrue(missingOutput.contains("sink s3://no-such-bucket/x: s3://no-such-bucket/x/"), missingOutput)
        XCTAssertTrue(missingOutput.contains("HTTP 404"), missingOutput)
        let (statusCode, statusText) = try await harness.run(["status", "--coordinator", endpoint])
        XCTAssertEqual(statusCode, 0, statusText)
        XCTAssertTrue(statusText.contains("workers: 1"), statusText)

        // A wrong secret: refused by the store (its signature does not match), the item fails, nothing leaks.
        var wrong = credentials
        wrong["AWS_SECRET_ACCESS_KEY"] = "wrong-\(UUID().uuidString)"
        let impostor = try harness.launch(
            "impostor", ["worker", "--coordinator", endpoint, "--log-level", "debug"], environment: wrong)
        let (forbidden, forbiddenOutput) = try await harness.run(
            [
                "submit", http[0], "s3://shiftwork-in/photos/a.jpg", "--sink", "s3://shiftwork-out/again",
                "--s3-endpoint", s3,
                "--coordinator", endpoint,
            ], environment: credentials)
        XCTAssertNotNil(forbidden, forbiddenOutput)
        XCTAssertTrue(impostor.isRunning, impostor.outputText)

        let printed = harness.allOutput
        XCTAssertFalse(printed.contains(secret), "the secret key was printed:\n\(printed)")
        XCTAssertFalse(printed.contains(wrong["AWS_SECRET_ACCESS_KEY"] ?? "-"), "the wrong secret key was printed")
    }

    func testAnS3SinkWithoutCredentialsIsRefusedAtSubmitSayingWhatToSet() async throws {
        let environment = [
            "AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent",
        ]
        let (status, output) = try await harness.run(
            [
                "submit", "https://example.org/a.jpg", "--sink", "s3://bucket/prefix", "--coordinator",
                "tcp://127.0.0.1:9",
            ],
            environment: environment)
        XCTAssertEqual(status, 1, output)
        XCTAssertTrue(output.contains("no S3 credentials found"), output)
        XCTAssertTrue(output.contains("AWS_ACCESS_KEY_ID") && output.contains("AWS_SECRET_ACCESS_KEY"), output)
        XCTAssertTrue(output.contains("~/.aws/credentials"), output)
    }
}
