import Foundation

/// The credentials and region a worker signs S3 requests with (AWS Signature Version 4, computed by
/// libcurl's `CURLOPT_AWS_SIGV4`), found where the AWS tools look: the environment
/// (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`), else the shared credentials file
/// (`AWS_SHARED_CREDENTIALS_FILE`, default `~/.aws/credentials`, profile `AWS_PROFILE` or `default`);
/// the region from `AWS_REGION` or `AWS_DEFAULT_REGION` (default `us-east-1`).
///
/// Its description never shows the secret or the token, so that no log line, status or error can.
public struct S3Credentials: Sendable, Equatable, CustomStringConvertible {
    let accessKeyID: String
    let secretAccessKey: String
    let sessionToken: String?
    /// The region requests are signed for.
    public let region: String
    /// Where they came from, for messages (`environment` or the file's path and profile).
    public let origin: String

    /// What to set when no credentials are found: the message for users.
    public static let howToSet =
        "set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN for temporary "
        + "credentials) in the environment, or write them to ~/.aws/credentials (AWS_SHARED_CREDENTIALS_FILE, AWS_PROFILE)"

    public var description: String { "S3 credentials \(accessKeyID.prefix(4))… from \(origin), region \(region)" }

    /// The credentials of this process's environment, else of the shared credentials file; `nil` when neither has any.
    /// Reads a small file: call it at start-up, not on Swift's cooperative pool in a hot path.
    public static func load(environment: [String: String] = ProcessInfo.processInfo.environment) -> S3Credentials? {
        let region =
            [environment["AWS_REGION"], environment["AWS_DEFAULT_REGION"]].compactMap { $0 }.first { !$0.isEmpty }
            ?? "us-east-1"
        if let key = environment["AWS_ACCESS_KEY_ID"], !key.isEmpty,
            let secret = environment["AWS_SECRET_ACCESS_KEY"], !secret.isEmpty
        {
            let token = environment["AWS_SESSION_TOKEN"].flatMap { $0.isEmpty ? nil : $0 }
            return S3Credentials(
                accessKeyID: key, secretAccessKey: secret, sessionToken: token, region: region,
                origin: "the environment")
        }
        let path =
            environment["AWS_SHARED_CREDENTIALS_FILE"].flatMap { $0.isEmpty ? nil : $0 }
            ?? environment["HOME"].map { "\($0)/.aws/credentials" }
        guard let path, let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        let profile = environment["AWS_PROFILE"].flatMap { $0.isEmpty ? nil : $0 } ?? "default"
        let values = profileValues(in: text, profile: profile)
        guard let key = values["aws_access_key_id"], !key.isEmpty, let secret = values["aws_secret_access_key"],
            !secret.isEmpty
        else {
            return nil
        }
        return S3Credentials(
            accessKeyID: key, secretAccessKey: secret, sessionToken: values["aws_session_token"],
            region: region, origin: "\(path) [\(profile)]")
    }

    /// The `key = value` lines of `[profile]` in an INI-style credentials file.
    static func profileValues(in text: String, profile: String) -> [String: String] {
        var values: [String: String] = [:]
        var inProfile = false
        for rawLine in text.split(whereSeparator: \.isNewline) {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("["), line.hasSuffix("]") {
                inProfile = line.dropFirst().dropLast().trimmingCharacters(in: .whitespaces) == profile
                continue
            }
            guard inProfile, let equals = line.firstIndex(of: "=") else { continue }
            let key = line[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
            values[key] = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
        }
        return values
    }
}
