import Wire
import XCTest

@testable import Cluster

/// A pair's announcements are checked before the rules hear them (`PairConfiguration.problem(with:)`): a peer
/// of another cluster, another major version or another pair version is refused with a message that says so.
final class PairHelloTests: XCTestCase {
    private let configuration = PairConfiguration(
        role: .primary, listen: "tcp://127.0.0.1:1", peer: "tcp://127.0.0.1:2", cluster: "render-farm")

    private func announcement(
        cluster: String = "render-farm", major: UInt32 = WireProtocol.major, pairVersion: UInt32 = 1,
        state: WirePairState = .active
    ) -> WirePairAnnouncement {
        WirePairAnnouncement(
            hello: WirePairHello(cluster: cluster, major: major, pairVersion: pairVersion, coordinatorID: "c"),
            role: .backup, state: state, position: WirePairPosition(term: 0, records: 3))
    }

    func testAPeerOfThisPairIsHeard() {
        XCTAssertNil(configuration.problem(with: announcement()))
        XCTAssertEqual(
            PairAnnouncement(announcement()),
            PairAnnouncement(role: .backup, state: .active, position: JournalPosition(term: 0, records: 3)))
    }

    func testAPeerOfAnotherClusterIsRefusedSayingWhich() throws {
        let problem = try XCTUnwrap(configuration.problem(with: announcement(cluster: "other\u{1B}[31m")))
        XCTAssertTrue(problem.contains("another cluster"), problem)
        XCTAssertTrue(problem.contains("render-farm"), problem)
        XCTAssertFalse(problem.contains("\u{1B}"), "the peer's text is escaped: \(problem)")
    }

    func testAnotherMajorVersionOrPairVersionOrAnUnsaidStateIsRefused() throws {
        let major = try XCTUnwrap(configuration.problem(with: announcement(major: WireProtocol.major + 1)))
        XCTAssertTrue(major.contains("major version"), major)
        let version = try XCTUnwrap(configuration.problem(with: announcement(pairVersion: 2)))
        XCTAssertTrue(version.contains("version 2 of the pair's protocol"), version)
        XCTAssertNotNil(configuration.problem(with: announcement(state: .unspecified)))
        var withoutHello = announcement()
        withoutHello.hello = nil
        XCTAssertNotNil(configuration.problem(with: withoutHello))
    }

    /// A peer of another major version puts it in its envelope, which does not decode: the link refuses it
    /// as such (counted and said), while anything else that does not decode is dropped as noise.
    func testAnEnvelopeOfAnotherMajorVersionIsARefusedPeerSayingWhich() throws {
        var bytes = WireCodec.encode(.pairAnnouncement(announcement()))
        XCTAssertEqual(bytes[1], UInt8(WireProtocol.major), "an envelope starts with its major version")
        bytes[1] = UInt8(WireProtocol.major + 1)
        let error: WireError
        do {
            _ = try WireCodec.decode(bytes)
            return XCTFail("an envelope of another major version decoded")
        } catch let thrown {
            error = thrown
        }
        let problem = try XCTUnwrap(PairConfiguration.problem(decoding: error))
        XCTAssertTrue(problem.contains("major version \(WireProtocol.major + 1)"), problem)
        XCTAssertTrue(problem.contains("neither changes its data"), problem)
        XCTAssertNil(PairConfiguration.problem(decoding: .malformed("truncated")))
        XCTAssertNil(PairConfiguration.problem(decoding: .missingBody))
    }
}
