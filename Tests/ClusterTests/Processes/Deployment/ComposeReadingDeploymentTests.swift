import Foundation
import XCTest

/// The helpers the compose tests rely on, on known inputs.
final class ComposeReadingDeploymentTests: XCTestCase {
    func testDurationsInComposeSyntax() throws {
        XCTAssertEqual(try ComposeDuration.parse("10s"), .seconds(10))
        XCTAssertEqual(try ComposeDuration.parse("1m30s"), .seconds(90))
        XCTAssertEqual(try ComposeDuration.parse("500ms"), .milliseconds(500))
        XCTAssertEqual(try ComposeDuration.parse("1h"), .seconds(3600))
        XCTAssertThrowsError(try ComposeDuration.parse("ten seconds"))
        XCTAssertThrowsError(try ComposeDuration.parse("10"))
    }

    func testPortMappingsInShortAndLongSyntax() throws {
        typealias Mapping = ComposeService.PortMapping
        XCTAssertEqual(
            try ComposeService.portMapping("5570:5570", service: "s"),
            Mapping(hostIP: nil, published: 5570, target: 5570))
        XCTAssertEqual(
            try ComposeService.portMapping("127.0.0.1:6000:5570/tcp", service: "s"),
            Mapping(hostIP: "127.0.0.1", published: 6000, target: 5570))
        XCTAssertEqual(
            try ComposeService.portMapping("5570", service: "s"), Mapping(hostIP: nil, published: nil, target: 5570))
        XCTAssertEqual(
            try ComposeService.portMapping(
                ["target": 5570, "published": "6000", "host_ip": "127.0.0.1"] as [String: Any], service: "s"),
            Mapping(hostIP: "127.0.0.1", published: 6000, target: 5570))
        XCTAssertThrowsError(try ComposeService.portMapping("5570-5580:5570-5580", service: "s"))
    }

    func testEndpointsAreRewrittenOntoLoopbackConsistently() throws {
        var network = LoopbackNetwork(serviceNames: ["coordinator", "worker"])
        let listen = try network.rewrite("tcp://0.0.0.0:5570", inside: "coordinator")
        let fromWorker = try network.rewrite("tcp://coordinator:5570", inside: "worker")
        let health = try network.rewrite("tcp://127.0.0.1:5570", inside: "coordinator")
        XCTAssertEqual(listen, fromWorker)
        XCTAssertEqual(listen, health)
        XCTAssertTrue(listen.hasPrefix("tcp://127.0.0.1:"), listen)
        XCTAssertNotEqual(listen, "tcp://127.0.0.1:5570", "the container port must become a free loopback port")
        XCTAssertEqual(try network.rewrite("log level info", inside: "worker"), "log level info")
        XCTAssertNotEqual(try network.rewrite("tcp://worker:7000", inside: "coordinator"), listen)
        XCTAssertThrowsError(try network.rewrite("tcp://db.example.org:5432", inside: "worker"))
    }

    func testComposeJSONInEveryAcceptedForm() throws {
        let json = #"""
            {"services": {
              "a": {"command": "worker --slots 2", "environment": ["X=1", "Y=a=b"], "depends_on": ["b"],
                    "stop_grace_period": "1m"},
              "b": {"command": ["coordinator"], "environment": {"N": 5, "S": "text", "U": null},
                    "healthcheck": {"test": "shiftwork status"}, "ports": ["5570:5570"]}
            }}
            """#
        let compose = try ComposeFile(json: Data(json.utf8))
        let a = try compose.service("a")
        let b = try compose.service("b")
        XCTAssertEqual(a.command, ["worker", "--slots", "2"])
        XCTAssertEqual(a.environment, ["X": "1", "Y": "a=b"])
        XCTAssertEqual(a.dependsOn, ["b": "service_started"])
        XCTAssertEqual(try a.duration("stop_grace_period"), .seconds(60))
        XCTAssertEqual(b.environment, ["N": "5", "S": "text"])
        XCTAssertEqual(b.healthcheck, ["CMD-SHELL", "shiftwork status"])
        XCTAssertEqual(try compose.startOrder(), ["b", "a"])
        XCTAssertThrowsError(try compose.service("c"))
    }
}
