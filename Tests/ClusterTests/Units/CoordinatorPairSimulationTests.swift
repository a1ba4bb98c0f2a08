import ShiftworkTestSupport
import XCTest

@testable import Cluster

/// The pair's failover rules (`CoordinatorPair`) under random faults: two coordinators with journals of
/// numbered records, a client that turns to the other coordinator when the one it uses is silent or
/// refuses, and, at random, kills and restarts (the journal kept), a link cut between the two coordinators
/// alone, a coordinator cut off from everyone (its network comes back whole), and time. Checked:
/// - every acknowledgement follows every earlier one: the coordinator that acknowledges holds every record
///   acknowledged before, by either (nothing acknowledged is lost, histories never fork);
/// - two coordinators that hear each other are never both active once their announcements crossed;
/// - once every fault is mended, the pair settles with exactly one active coordinator.
final class CoordinatorPairSimulationTests: XCTestCase {
    private static let timeout = Duration.seconds(3)

    /// One coordinator: its rules, and what survives a kill (journal, term, history).
    private struct Node {
        let role: PairRole
        var rules: CoordinatorPair
        var alive = true
        var journal: [Int] = []
        var history: PairHistory = .none
        var term: UInt64 = 0

        init(role: PairRole, now: ContinuousClock.Instant) {
            self.role = role
            rules = CoordinatorPair(
                role: role, failoverTimeout: CoordinatorPairSimulationTests.timeout,
                history: .none, position: .empty, now: now)
        }

        var position: JournalPosition { JournalPosition(term: term, records: UInt64(journal.count)) }

        mutating func restart(now: ContinuousClock.Instant) {
            alive = true
            rules = CoordinatorPair(
                role: role, failoverTimeout: CoordinatorPairSimulationTests.timeout,
                history: history, position: position, now: now)
        }
    }

    private struct World {
        var nodes: [Node]
        var now = ContinuousClock.now
        var linkUp = true
        var reachable = [true, true]
        var clientTarget = 0
        /// The furthest position a coordinator acknowledged something to the client at.
        var witnessed = JournalPosition.empty
        var acknowledged: [Int] = []
        var nextRecord = 1
        var log: [String] = []

        init() {
            let start = ContinuousClock.now
            nodes = [Node(role: .primary, now: start), Node(role: .backup, now: start)]
            now = start
        }

        /// Carries out a coordinator's effects on what survives it.
        mutating func apply(_ effects: [PairEffect], on index: Int) {
            for effect in effects {
                switch effect {
                case .record(let history): nodes[index].history = history
                case .becomeActive:
                    nodes[index].term = nodes[index].rules.position.term
                    log.append("\(nodes[index].role) active (term \(nodes[index].term))")
                case .becomePassive: log.append("\(nodes[index].role) passive")
                case .accept, .refuse, .misconfigured, .splitBrain, .implausibleWitness: break
                }
            }
        }

        mutating func sync(_ index: Int) { nodes[index].rules.position = nodes[index].position }

        /// Announcements both ways, then the passive one's catching up and the active one told of it.
        mutating func exchange() {
            guard linkUp, nodes[0].alive, nodes[1].alive else { return }
            for (from, to) in [(0, 1), (1, 0)] {
                sync(from)
                sync(to)
                let effects = nodes[to].rules.handle(.peerAnnounced(nodes[from].rules.announcement), now: now)
                apply(effects, on: to)
            }
            for (leader, follower) in [(0, 1), (1, 0)]
            where nodes[leader].rules.state == .active && nodes[follower].rules.state == .passive {
                // The stream: the follower's journal becomes the leader's (an unacknowledged tail of its own
                // dropped), its term too.
                nodes[follower].journal = nodes[leader].journal
                nodes[follower].term = nodes[leader].term
                sync(follower)
                apply(nodes[leader].rules.handle(.peerCaughtUp, now: now), on: leader)
            }
        }

        /// The client sends one request: accepted by an active coordinator, which journals a record and
        /// acknowledges it as its history allows; else the client turns to the other coordinator.
        mutating func request() {
            let index = clientTarget
            guard nodes[index].alive, reachable[index] else {
                clientTarget = 1 - index
                return
            }
            sync(index)
            let effects = nodes[index].rules.handle(.request(witnessed: witnessed), now: now)
            apply(effects, on: index)
            guard effects.contains(.accept) else {
                clientTarget = 1 - index
                return
            }
            // What an active coordinator acknowledges follows everything acknowledged before, by whichever.
            let held = Set(nodes[index].journal)
            let missing = acknowledged.filter { !held.contains($0) }
            XCTAssertTrue(
                missing.isEmpty,
                "the active \(nodes[index].role) acknowledges without the acknowledged records \(missing.prefix(5)): \(log.suffix(40))"
            )
            let record = nextRecord
            nextRecord += 1
            nodes[index].journal.append(record)
            if nodes[index].history == .activeWithPeer {
                // Acknowledged only once the peer holds it: with the link up, the stream carries it at once.
                let peer = 1 - index
                guard linkUp, nodes[peer].alive, nodes[peer].rules.state == .passive else { return }
                nodes[peer].journal = nodes[index].journal
                nodes[peer].term = nodes[index].term
            }
            acknowledged.append(record)
            log.append("ack \(record) by \(nodes[index].role) (\(nodes[index].history))")
            witnessed = max(witnessed, nodes[index].position)
        }

        mutating func tick() {
            for index in 0..<2 where nodes[index].alive {
                sync(index)
                apply(nodes[index].rules.handle(.tick, now: now), on: index)
            }
        }

        /// After announcements went both ways: never both active.
        func checkSettled(step: Int, seed: UInt64) {
            guard linkUp, nodes[0].alive, nodes[1].alive else { return }
            XCTAssertFalse(
                nodes.allSatisfy { $0.rules.state == .active },
                "two active coordinators that hear each other at step \(step), seed \(seed): \(log.suffix(8))")
        }
    }

    func testRandomFaultsNeverMakeTwoActiveNorLoseAnAcknowledgedRecord() {
        for seed in UInt64(1)...300 {
            var random = SeededGenerator(seed: 0x5EED_0031 &+ seed)
            var world = World()
            for step in 0..<400 {
                switch Int.random(in: 0..<100, using: &random) {
                case 0..<4:  // kill one (never both: someone must remember what was acknowledged)
                    let index = Int.random(in: 0..<2, using: &random)
                    if world.nodes[1 - index].alive {
                        world.nodes[index].alive = false
                        world.log.append("kill \(world.nodes[index].role)")
                    }
                case 4..<10:
                    for index in 0..<2 where !world.nodes[index].alive {
                        world.nodes[index].restart(now: world.now)
                        world.log.append("restart \(world.nodes[index].role)")
                    }
                case 10..<13:
                    world.linkUp = false
                    world.log.append("cut the link")
                case 13..<20: world.linkUp = true
                case 20..<22:
                    // One coordinator cut off from everyone: its peer and the clients.
                    let index = Int.random(in: 0..<2, using: &random)
                    world.reachable[index] = false
                    world.linkUp = false
                    world.log.append("isolate \(world.nodes[index].role)")
                case 22..<28:
                    // An isolated coordinator's network comes back whole: the link to its peer too.
                    if world.reachable.contains(false) { world.linkUp = true }
                    world.reachable = [true, true]
                case 28..<50:
                    world.now += .milliseconds(Int.random(in: 200...1500, using: &random))
                    world.tick()
                case 50..<70:
                    world.exchange()
                    world.checkSettled(step: step, seed: seed)
                default: world.request()
                }
            }
            // Everything mended: the pair settles with one active coordinator, which holds every record.
            for index in 0..<2 where !world.nodes[index].alive { world.nodes[index].restart(now: world.now) }
            world.linkUp = true
            world.reachable = [true, true]
            for _ in 0..<6 {
                world.exchange()
                world.now += .seconds(1)
                world.tick()
                for _ in 0..<2 { world.request() }
            }
            let states = world.nodes.map(\.rules.state)
            XCTAssertEqual(
                states.filter { $0 == .active }.count, 1,
                "seed \(seed): \(states) after every fault was mended; \(world.log.suffix(10))")
            for node in world.nodes where node.rules.state == .active {
                XCTAssertTrue(
                    Set(node.journal).isSuperset(of: world.acknowledged),
                    "seed \(seed): the active \(node.role) lacks acknowledged records")
            }
        }
    }
}
