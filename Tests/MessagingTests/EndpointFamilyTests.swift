import Messaging
import XCTest

/// Which endpoints turn `ZMQ_IPV6` on: IPv6 addresses, the wildcard and names, never an IPv4 address
/// (which would then be reported IPv4-mapped, `::ffff:127.0.0.1`).
final class EndpointFamilyTests: XCTestCase {
    func testIPv6AddressesTheWildcardAndNamesNeedIPv6() {
        for endpoint in [
            "tcp://[::1]:5570", "tcp://[fd00:5713::2]:*", "tcp://*:5570", "tcp://coordinator:5570",
            "tcp://shiftwork-coordinator.default.svc:5570", "TCP://[::]:5570", "tcp://eth0;[::1]:5570",
        ] {
            XCTAssertTrue(EndpointFamily.needsIPv6(endpoint), endpoint)
        }
    }

    func testIPv4AddressesAndOtherTransportsDoNot() {
        for endpoint in [
            "tcp://127.0.0.1:5570", "tcp://0.0.0.0:*", "tcp://10.213.4.1:41231", "inproc://shiftwork",
            "ipc:///tmp/shiftwork.sock", "tcp://192.168.1.2;10.0.0.5:5570",
        ] {
            XCTAssertFalse(EndpointFamily.needsIPv6(endpoint), endpoint)
        }
    }

    func testOneEndpointThatNeedsItIsEnough() {
        XCTAssertTrue(EndpointFamily.needsIPv6(["tcp://127.0.0.1:5570", "tcp://[::1]:5570"]))
        XCTAssertFalse(EndpointFamily.needsIPv6(["tcp://127.0.0.1:5570", "inproc://x"]))
        XCTAssertFalse(EndpointFamily.needsIPv6([]))
    }
}
