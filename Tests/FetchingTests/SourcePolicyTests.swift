import XCTest

@testable import Fetching

/// The source policy as a value: CIDR parsing, the decision for every denied range and its spellings, the
/// operator's exceptions and additions. No sockets (SourcePolicyDownloadTests connects for real).
final class SourcePolicyTests: XCTestCase {
    private let worker = SourcePolicy.restricted()

    private func address(_ text: String, file: StaticString = #filePath, line: UInt = #line) throws -> IPAddress {
        try XCTUnwrap(IPAddress(text), "\(text) is an address", file: file, line: line)
    }

    private func refusal(
        _ host: String, _ policy: SourcePolicy? = nil, file: StaticString = #filePath,
        line: UInt = #line
    ) throws -> SourceRefusal {
        let decision = try XCTUnwrap(
            (policy ?? worker).decision(forHost: host), "\(host) is an address", file: file, line: line)
        return try XCTUnwrap(decision.refusal, "\(host) is refused", file: file, line: line)
    }

    // MARK: Parsing

    func testNetworksParseInCIDRNotationAndClearTheHostBits() throws {
        XCTAssertEqual(try IPNetwork(parsing: "127.0.0.0/8").description, "127.0.0.0/8")
        XCTAssertEqual(try IPNetwork(parsing: " 10.1.2.3/8 ").description, "10.0.0.0/8")
        XCTAssertEqual(try IPNetwork(parsing: "192.0.2.7").description, "192.0.2.7/32")
        XCTAssertEqual(try IPNetwork(parsing: "fe80::1/10").description, "fe80::/10")
        XCTAssertEqual(try IPNetwork(parsing: "::1").description, "::1/128")
        XCTAssertEqual(try IPNetwork(parsing: "0.0.0.0/0").description, "0.0.0.0/0")
        XCTAssertEqual(try IPNetwork.parseList("127.0.0.0/8, ::1/128,").map(\.description), ["127.0.0.0/8", "::1/128"])
    }

    func testANetworkThatIsNotCIDRIsRefusedNamingTheValueAndAnExample() {
        for (text, words) in [
            ("localhost", "'localhost' is not a network"), ("127.1/8", "'127.1/8' is not a network"),
            ("10.0.0.0/33", "0 to 32 for an IPv4"), ("::/129", "0 to 128 for an IPv6"),
            ("10.0.0.0/x", "prefix length"), ("10.0.0.0/", "prefix length"), ("", "CIDR notation"),
        ] {
            XCTAssertThrowsError(try IPNetwork(parsing: text), text) { error in
                let message = (error as? SourcePolicyError)?.description ?? ""
                XCTAssertTrue(message.contains(words), "\(text): \(message)")
                XCTAssertTrue(message.contains("such as"), "an example: \(message)")
            }
        }
        XCTAssertThrowsError(try IPNetwork.parseList("127.0.0.0/8,nonsense"))
    }

    func testHostSpellingsReadAsTheAddressTheResolverWouldConnectTo() throws {
        for host in [
            "127.0.0.1", "127.1", "2130706433", "0x7f000001", "0x7f.0.0.1", "0177.0.0.1", "0177.1", "127.0.0.1.",
            "017700000001",
        ] {
            XCTAssertEqual(IPAddress(urlHost: host)?.description, "127.0.0.1", host)
        }
        XCTAssertEqual(IPAddress(urlHost: "0")?.description, "0.0.0.0")
        XCTAssertEqual(IPAddress(urlHost: "[::ffff:127.0.0.1]")?.description, "::ffff:127.0.0.1")
        XCTAssertEqual(IPAddress(urlHost: "[::]")?.description, "::")
        XCTAssertEqual(IPAddress(urlHost: "[fe80::1%25eth0]")?.description, "fe80::1")
        XCTAssertNil(IPAddress(urlHost: "localhost"), "a name is judged once resolved")
        XCTAssertNil(IPAddress(urlHost: "example.org"))
        XCTAssertNil(IPAddress(urlHost: "deadbeef.example"))
        XCTAssertNil(IPAddress(urlHost: "::1"), "IPv6 in a URL has brackets")
        XCTAssertNil(IPAddress("127.1"), "CIDR addresses are strict dotted quads")
    }

    func testURLHostsAreTakenFromTheAuthority() {
        XCTAssertEqual(URLHost.host(of: "http://alice:pw@[::1]:8080/x"), "[::1]")
        XCTAssertEqual(URLHost.host(of: "http://127.1/x?y=http://z"), "127.1")
        XCTAssertEqual(URLHost.host(of: "https://example.org:443"), "example.org")
        XCTAssertEqual(URLHost.host(of: "http://a@b@10.0.0.1#f"), "10.0.0.1")
        XCTAssertNil(URLHost.host(of: "/local/path.jpg"))
    }

    // MARK: The default denials

    func testEveryDefaultDeniedRangeIsRefusedWithWhatItIs() throws {
        let cases: [(String, String, String)] = [
            ("127.0.0.1", "127.0.0.0/8", "loopback"), ("127.255.0.9", "127.0.0.0/8", "loopback"),
            ("[::1]", "::1/128", "loopback"),
            ("169.254.169.254", "169.254.169.254/32", "metadata"), ("169.254.10.1", "169.254.0.0/16", "link-local"),
            ("[fe80::1]", "fe80::/10", "link-local"), ("[febf::1]", "fe80::/10", "link-local"),
            ("[fd00:ec2::254]", "fd00:ec2::254/128", "metadata"),
            ("0.0.0.0", "0.0.0.0/8", "unspecified"), ("0", "0.0.0.0/8", "unspecified"),
            ("[::]", "::/128", "unspecified"),
            ("224.0.0.1", "224.0.0.0/4", "multicast"), ("239.255.255.250", "224.0.0.0/4", "multicast"),
            ("[ff02::1]", "ff00::/8", "multicast"), ("255.255.255.255", "255.255.255.255/32", "broadcast"),
        ]
        for (host, network, category) in cases {
            let refusal = try refusal(host)
            XCTAssertEqual(refusal.network.description, network, host)
            XCTAssertEqual(refusal.category, category, host)
            XCTAssertTrue(refusal.message.contains("--allow-source-networks"), refusal.message)
            XCTAssertTrue(refusal.message.contains("SHIFTWORK_ALLOW_SOURCE_NETWORKS"), refusal.message)
        }
    }

    func testTheMessageNamesTheAddressWhyAndTheOptionThatAllowsIt() throws {
        XCTAssertEqual(
            try refusal("127.1").message,
            "address 127.0.0.1 is loopback (this machine), in 127.0.0.0/8, which this worker does not fetch from "
                + "(source policy); to allow it, start the worker with --allow-source-networks 127.0.0.1/32 or "
                + "127.0.0.0/8 (env SHIFTWORK_ALLOW_SOURCE_NETWORKS)")
        XCTAssertTrue(try refusal("169.254.169.254").message.contains("the cloud instance metadata service"))
        XCTAssertTrue(
            try refusal("[::1]").message.contains("--allow-source-networks ::1/128 (env"),
            "a range of one address is named once")
    }

    func testIPv4MappedCompatibleNAT64And6to4FormsAreJudgedAsTheirIPv4Address() throws {
        let mapped = try refusal("[::ffff:127.0.0.1]")
        XCTAssertEqual(mapped.address.description, "::ffff:127.0.0.1", "the message shows the address as used")
        XCTAssertEqual(mapped.network.description, "127.0.0.0/8")
        XCTAssertTrue(mapped.message.contains("--allow-source-networks 127.0.0.1/32"), mapped.message)
        XCTAssertEqual(try refusal("[::ffff:169.254.169.254]").category, "metadata")
        XCTAssertEqual(try refusal("[::ffff:0.0.0.0]").category, "unspecified")
        XCTAssertEqual(try refusal("[::ffff:7f00:1]").category, "loopback")
        XCTAssertEqual(try refusal("[::127.0.0.1]").category, "loopback", "IPv4-compatible")
        XCTAssertEqual(try refusal("[64:ff9b::a9fe:a9fe]").category, "metadata", "NAT64 of 169.254.169.254")
        XCTAssertEqual(try refusal("[2002:7f00:1::]").category, "loopback", "6to4 of 127.0.0.1")
        XCTAssertEqual(worker.decision(forHost: "[::ffff:93.184.215.14]"), .allowed)
        XCTAssertEqual(worker.decision(forHost: "[64:ff9b::5db8:d70e]"), .allowed)
        XCTAssertEqual(try refusal("[::2]").category, "unspecified", "::2 is IPv4-compatible 0.0.0.2, in 0.0.0.0/8")
    }

    func testOrdinaryAndPrivateAddressesAreAllowedByDefault() {
        for host in [
            "93.184.215.14", "10.0.0.5", "192.168.1.10", "172.16.0.1", "100.64.0.1", "[2001:db8::1]", "[fd12::1]",
            "[fd00:ec2::253]", "169.253.255.255", "126.255.255.255", "128.0.0.1", "223.255.255.255",
        ] {
            XCTAssertEqual(worker.decision(forHost: host), .allowed, host)
        }
    }

    func testUnrestrictedAllowsEverything() {
        XCTAssertTrue(SourcePolicy.unrestricted.allowsEverything)
        XCTAssertFalse(worker.allowsEverything)
        for host in ["127.0.0.1", "[::1]", "169.254.169.254", "0.0.0.0", "[::ffff:127.0.0.1]"] {
            XCTAssertEqual(SourcePolicy.unrestricted.decision(forHost: host), .allowed, host)
        }
    }

    // MARK: The operator's ranges

    func testAllowedNetworksAreExceptionsToTheDefaultDenials() throws {
        let policy = SourcePolicy.restricted(allowing: try IPNetwork.parseList("127.0.0.0/8,::1/128"))
        for host in ["127.0.0.1", "127.1", "2130706433", "[::1]", "[::ffff:127.0.0.1]"] {
            XCTAssertEqual(policy.decision(forHost: host), .allowed, host)
        }
        XCTAssertEqual(try refusal("169.254.169.254", policy).category, "metadata", "only what is allowed")
        XCTAssertEqual(try refusal("0.0.0.0", policy).category, "unspecified", "0.0.0.0 is not in 127.0.0.0/8")
        let one = SourcePolicy.restricted(allowing: [try IPNetwork(parsing: "127.0.0.2/32")])
        XCTAssertEqual(one.decision(forHost: "127.0.0.2"), .allowed)
        XCTAssertNotNil(one.decision(forHost: "127.0.0.1")?.refusal)
    }

    func testDeniedNetworksAddRangesAndTheMostSpecificRuleDecides() throws {
        let policy = SourcePolicy.restricted(
            allowing: try IPNetwork.parseList("10.1.2.3/32,192.168.0.0/16"),
            denying: try IPNetwork.parseList("10.0.0.0/8,192.168.0.0/16,fc00::/7"))
        let denied = try refusal("10.9.9.9", policy)
        XCTAssertEqual(denied.reason, .deniedByOperator)
        XCTAssertEqual(denied.network.description, "10.0.0.0/8")
        XCTAssertTrue(denied.message.contains("denied by --deny-source-networks"), denied.message)
        XCTAssertTrue(denied.message.contains("--allow-source-networks such as 10.9.9.9/32"), denied.message)
        XCTAssertEqual(policy.decision(forHost: "10.1.2.3"), .allowed, "a narrower allow wins")
        XCTAssertNotNil(policy.decision(forHost: "192.168.4.4")?.refusal, "a tie is denied")
        XCTAssertNotNil(policy.decision(forHost: "[fd12::1]")?.refusal)
        XCTAssertNotNil(policy.decision(forHost: "[::ffff:10.9.9.9]")?.refusal, "mapped forms of added ranges too")
        XCTAssertEqual(policy.decision(forHost: "93.184.215.14"), .allowed)
        XCTAssertFalse(
            SourcePolicy(allowed: [], denied: [try IPNetwork(parsing: "10.0.0.0/8")], deniesSpecialNetworks: false)
                .allowsEverything)
    }

    func testTheSpecialNetworkTableParses() {
        XCTAssertEqual(SpecialNetwork.all.count, 11)
        XCTAssertFalse(
            SpecialNetwork.all.contains { $0.network.description == "255.255.255.255/32" && $0.kind != "broadcast" },
            "a typo in the table would fall back to 255.255.255.255/32")
    }
}
