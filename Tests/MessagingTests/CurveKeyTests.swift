import Foundation
import XCTest

@testable import Messaging

/// CurveZMQ key pairs: generation, files, and the errors for files that are not what they should be.
final class CurveKeyTests: XCTestCase {
    private var directory: String!

    override func setUp() {
        directory =
            FileManager.default.temporaryDirectory.appendingPathComponent("curve-keys-\(UUID().uuidString)").path
    }

    override func tearDown() {
        try? FileManager.default.removeItem(atPath: directory)
    }

    private func write(_ name: String, _ text: String) throws -> String {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = (directory as NSString).appendingPathComponent(name)
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    func testGeneratedPairsAreDistinctZ85AndThePublicKeyDerivesFromTheSecret() throws {
        let pair = try CurveKeyPair.generate()
        let other = try CurveKeyPair.generate()
        XCTAssertEqual(pair.secretKey.count, 40)
        XCTAssertEqual(pair.publicKey.z85.count, 40)
        XCTAssertNotEqual(pair, other)
        XCTAssertEqual(try CurveKeyPair(secretKey: pair.secretKey), pair)
        XCTAssertEqual(try CurvePublicKey(z85: pair.publicKey.z85), pair.publicKey)
    }

    func testPairsRoundTripThroughFilesWithPrivateSecretsAndNoSilentOverwrite() throws {
        let pair = try CurveKeyPair.generate()
        let paths = try pair.write(name: "worker-1", into: directory)
        XCTAssertEqual(try CurveKeyPair.load(secretKeyFile: paths.secretKey), pair)
        XCTAssertEqual(try CurvePublicKey.load(file: paths.publicKey), pair.publicKey)
        let mode = try XCTUnwrap(
            FileManager.default.attributesOfItem(atPath: paths.secretKey)[.posixPermissions] as? Int)
        XCTAssertEqual(mode & 0o777, 0o600, "the secret key file must be readable by its owner only")

        let replacement = try CurveKeyPair.generate()
        XCTAssertThrowsError(try replacement.write(name: "worker-1", into: directory)) { error in
            XCTAssertTrue("\(error)".contains("worker-1.key already exists"), "\(error)")
            XCTAssertTrue("\(error)".contains("--force"), "\(error)")
        }
        XCTAssertEqual(
            try CurveKeyPair.load(secretKeyFile: paths.secretKey), pair, "a refused overwrite changed the file")
        try replacement.write(name: "worker-1", into: directory, overwrite: true)
        XCTAssertEqual(try CurveKeyPair.load(secretKeyFile: paths.secretKey), replacement)
    }

    func testMalformedKeyFilesSayWhichFileAndWhatIsExpected() throws {
        let pair = try CurveKeyPair.generate()
        let cases: [(name: String, text: String, load: (String) throws -> Void, expected: [String])] = [
            (
                "short.key", "abc\n", { _ = try CurveKeyPair.load(secretKeyFile: $0) },
                ["line 1", "40 characters of Z85", "found 3 characters"]
            ),
            (
                "empty.key", "# nothing\n\n", { _ = try CurveKeyPair.load(secretKeyFile: $0) },
                ["holds 0 non-comment lines", "shiftwork keygen"]
            ),
            (
                "two.pub", "\(pair.publicKey.z85)\n\(pair.publicKey.z85)\n", { _ = try CurvePublicKey.load(file: $0) },
                ["holds 2 keys"]
            ),
            (
                "bad.pub", "# a comment\nnot a key at all\n", { _ = try CurvePublicKey.load(file: $0) },
                ["line 2", "expected a CurveZMQ public key", "'not'"]
            ),
            (
                "list.txt", "\(pair.publicKey.z85) worker-1\nzzz\n", { _ = try CurvePublicKey.loadAllowList($0) },
                ["line 2", "found 'zzz'"]
            ),
        ]
        for item in cases {
            let path = try write(item.name, item.text)
            XCTAssertThrowsError(try item.load(path), item.name) { error in
                let text = "\(error)"
                XCTAssertTrue(text.contains(path), "\(item.name): the error does not name the file: \(text)")
                for expected in item.expected {
                    XCTAssertTrue(text.contains(expected), "\(item.name): '\(expected)' missing from: \(text)")
                }
            }
        }
        // A secret key's content is never quoted back.
        let secretLike = String(pair.secretKey.dropLast()) + " "
        let path = try write("wrong.key", secretLike + "x\n")
        XCTAssertThrowsError(try CurveKeyPair.load(secretKeyFile: path)) { error in
            XCTAssertFalse("\(error)".contains(String(pair.secretKey.prefix(20))), "\(error)")
        }
        XCTAssertThrowsError(try CurveKeyPair.load(secretKeyFile: directory + "/missing.key")) { error in
            XCTAssertTrue("\(error)".contains("cannot read the secret key file \(directory!)/missing.key"), "\(error)")
        }
    }

    func testAllowListsFromADirectoryOfPubFilesOrOneFile() throws {
        let pairs = try (0..<3).map { _ in try CurveKeyPair.generate() }
        for (index, pair) in pairs.enumerated() { try pair.write(name: "peer-\(index)", into: directory) }
        XCTAssertEqual(
            try CurvePublicKey.loadAllowList(directory), Set(pairs.map(\.publicKey)),
            "the .key files are not keys to allow")
        let list = try write("allowed.txt", "# workers\n" + pairs.map { "\($0.publicKey.z85)  label\n" }.joined())
        XCTAssertEqual(try CurvePublicKey.loadAllowList(list), Set(pairs.map(\.publicKey)))
        let empty = directory + "/empty"
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
        XCTAssertThrowsError(try CurvePublicKey.loadAllowList(empty)) {
            XCTAssertTrue("\($0)".contains("has no *.pub file"), "\($0)")
        }
        XCTAssertThrowsError(try CurvePublicKey.loadAllowList(directory + "/nowhere")) {
            XCTAssertTrue("\($0)".contains("does not exist"), "\($0)")
        }
    }
}
