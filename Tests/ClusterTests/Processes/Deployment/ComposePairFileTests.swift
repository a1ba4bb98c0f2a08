import Foundation
import ShiftworkTestSupport
import XCTest

/// How compose.yaml's coordinator pair fits together (docs/failover.md, docs/deployment.md "One coordinator or a
/// pair"), read with PyYAML as `ComposeDeploymentTests` reads it: the two coordinators run the same image and
/// command, one as primary and one as backup, each reaching the other on its pair port (never published), each
/// with a volume of its own; compose.single.yaml turns the pair back into one coordinator. Running the services is
/// `ComposeDeploymentTests`'; the pair in real containers, killed mid-batch, is Tests/Containers/test_compose_pair.py.
final class ComposePairFileTests: DeploymentTestCase {
    func testThePairsCoordinatorsPointAtEachOtherWithAVolumeEach() async throws {
        let compose = try await ComposeFile.load()
        let a = try compose.service("coordinator-a")
        let b = try compose.service("coordinator-b")
        XCTAssertEqual(a.command, b.command, "both coordinators run the same command")
        XCTAssertEqual(a.string("image"), b.string("image"), "both coordinators run the same image")
        XCTAssertEqual(a.environment["SHIFTWORK_HA"], "primary")
        XCTAssertEqual(b.environment["SHIFTWORK_HA"], "backup")
        for (service, peer) in [(a, b), (b, a)] {
            let listen = try XCTUnwrap(service.environment["SHIFTWORK_HA_LISTEN"], "\(service.name): no pair port")
            let listenPort = try XCTUnwrap(
                listen.wholeMatch(of: #/tcp://\*:([0-9]+)/#).flatMap { Int($0.output.1) },
                "\(service.name): SHIFTWORK_HA_LISTEN=\(listen) must listen on tcp://*:PORT")
            let peerListen = try XCTUnwrap(peer.environment["SHIFTWORK_HA_LISTEN"])
            let peerPort = try XCTUnwrap(peerListen.wholeMatch(of: #/tcp://\*:([0-9]+)/#).flatMap { Int($0.output.1) })
            XCTAssertEqual(
                service.environment["SHIFTWORK_HA_PEER"], "tcp://\(peer.name):\(peerPort)",
                "\(service.name) must reach \(peer.name) on its pair port by service name")
            XCTAssertFalse(
                service.ports.contains { $0.target == listenPort },
                "\(service.name): the pair's port \(listenPort) is for the other coordinator only: never published")
            XCTAssertNotNil(service.healthcheck, "\(service.name): no health check")
            XCTAssertNotNil(service.environment["SHIFTWORK_FAILOVER_TIMEOUT"], "\(service.name): no failover timeout")
            XCTAssertEqual(
                service.environment["SHIFTWORK_FAILOVER_TIMEOUT"], peer.environment["SHIFTWORK_FAILOVER_TIMEOUT"],
                "the two coordinators of a pair wait the same time")
        }
        // A volume each: the two journals never share a directory.
        let volumes = try [a, b].map { service in
            let directory = try XCTUnwrap(service.environment["SHIFTWORK_DATA_DIR"], "\(service.name): no data dir")
            let mount = try XCTUnwrap(
                service.volumes.first { directory == $0.target || directory.hasPrefix($0.target + "/") },
                "\(service.name): \(directory) is on no volume")
            XCTAssertFalse(mount.isBindMount, "\(service.name): \(directory) must be on a named volume")
            return mount.source
        }
        XCTAssertNotEqual(volumes[0], volumes[1], "each coordinator needs a volume of its own")
        // Each published on a host port of its own, for a client that names both.
        let published = [a, b].compactMap { $0.ports.first?.published }
        XCTAssertEqual(published.count, 2, "both coordinators are published for clients on the host")
        XCTAssertEqual(Set(published).count, 2, "the two coordinators' host ports differ: \(published)")
    }

    func testSingleOverrideLeavesOneCoordinatorWithoutThePair() async throws {
        let compose = try await ComposeFile.load("compose.yaml", "compose.single.yaml")
        let a = try compose.service("coordinator-a")
        for variable in ["SHIFTWORK_HA", "SHIFTWORK_HA_LISTEN", "SHIFTWORK_HA_PEER", "SHIFTWORK_FAILOVER_TIMEOUT"] {
            XCTAssertEqual(a.environment[variable] ?? "", "", "compose.single.yaml must clear \(variable)")
        }
        XCTAssertEqual(try compose.service("coordinator-b").replicaCount(), 0)
        let port = try XCTUnwrap(a.ports.first?.target)
        XCTAssertEqual(
            try compose.service("worker").environment["SHIFTWORK_COORDINATOR"], "tcp://coordinator-a:\(port)")
    }
}
