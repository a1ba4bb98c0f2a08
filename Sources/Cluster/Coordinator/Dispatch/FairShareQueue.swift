import DequeModule
import HeapModule
import Operations

/// The tasks waiting for a worker slot, and which goes next: fair share between clients, and between
/// the batches of one client, weighted by the batches' priorities (stride scheduling). O(1) to enqueue
/// and remove, O(log f) to dequeue, f the number of classes with waiting tasks (a handful).
///
/// - A *lane* holds one batch's tasks in the batch's own order (`TaskLane`: urgent tasks first, a
///   task whose worker died before the rest).
/// - A *flow* is a `ShareClass` (a client and a priority) with the lanes of its batches that have
///   tasks; it serves them round robin, one task each.
/// - Flows take turns by *pass*: the flow with the least pass gives the next task, and its pass grows by
///   its *stride*, `2^20 / weight`. Over any stretch in which flows A and B have tasks, their shares of
///   the dispatches are as their weights (`BatchPriority.weight(of:)`), within one task each.
/// - A flow that gets tasks after a pause starts at the pass of the flow served last (never lower than
///   its own): it is served next, but earns no credit for the time it had nothing to do.
///
/// So nothing starves: a flow with tasks is served at least once every `total weight / its weight`
/// dispatches (1,024 + 1 at worst, for priority -10 against one batch of priority 10); a batch within a
/// flow, once every round of its flow's batches. With `SchedulingPolicy.fifo` every task is in one
/// lane of one flow: the order tasks became ready, urgent ones first.
///
/// Removal is lazy: a removed key stays where it is and is skipped when it comes up; once nothing is
/// left, everything is let go at once. Batches are described with `register` before their tasks come
/// (a batch not registered shares as a class of its own, at normal priority).
struct FairShareQueue {
    let policy: SchedulingPolicy
    /// The class of each registered batch.
    private var classes: [String: ShareClass] = [:]
    private var lanes: [TaskLane] = []
    private var freeLanes: [Int] = []
    private var laneByBatch: [String: Int] = [:]
    private var flows: [Flow] = []
    private var freeFlows: [Int] = []
    private var flowByClass: [ShareClass: Int] = [:]
    private var heap = PassHeap()
    /// The pass of the flow served last: where a flow that gets tasks after a pause starts.
    private var virtualTime: UInt64 = 0
    /// Orders flows with equal passes by when they got tasks.
    private var activations: UInt64 = 0
    /// Removed keys not dequeued yet (skipped when they are).
    private(set) var removed: Set<TaskKey> = []
    private(set) var count = 0

    /// The scale of the strides: the stride of weight w is `strideScale / w`.
    static let strideScale: UInt64 = 1 << 20

    private struct Flow {
        let shareClass: ShareClass
        let stride: UInt64
        var pass: UInt64 = 0
        /// Lanes with tasks, served round robin.
        var ring = Deque<Int>()
        var isScheduled = false
        /// Lanes of the flow that exist (with tasks, or removed ones still to skip).
        var lanes = 0
    }

    init(policy: SchedulingPolicy = .fairShare) {
        self.policy = policy
    }

    var isEmpty: Bool { count == 0 }

    // MARK: Batches

    /// Describes a batch before its tasks come: whose it is and its priority.
    mutating func register(batch batchID: String, as shareClass: ShareClass) {
        classes[batchID] = shareClass
    }

    /// Forgets a batch's description (it has finished); tasks of it still queued keep their place.
    mutating func unregister(batch batchID: String) {
        classes[batchID] = nil
    }

    /// The class a batch shares as.
    func shareClass(of batchID: String) -> ShareClass? { classes[batchID] }

    // MARK: Tasks

    /// Adds a task of `batchID` behind the batch's other tasks of its `urgency`, or with `front` before them.
    mutating func enqueue(_ key: TaskKey, batch batchID: String, urgency: Int = 0, front: Bool = false) {
        let laneKey = policy == .fifo ? "" : batchID
        let lane = laneByBatch[laneKey] ?? makeLane(laneKey)
        lanes[lane].push(key, urgency: urgency, front: front)
        count += 1
        guard !lanes[lane].isScheduled else { return }
        lanes[lane].isScheduled = true
        let flow = lanes[lane].flow
        flows[flow].ring.append(lane)
        guard !flows[flow].isScheduled else { return }
        flows[flow].isScheduled = true
        flows[flow].pass = max(flows[flow].pass, virtualTime)
        activations += 1
        heap.insert(FlowPass(pass: flows[flow].pass, order: activations, flow: flow))
    }

    /// Removes a task wherever it is (lazily; once nothing is left, the removed keys are let go at once,
    /// so that tasks cancelled while no worker takes any do not pile up).
    mutating func remove(_ key: TaskKey) {
        removed.insert(key)
        count -= 1
        if count == 0 { removeAll() }
    }

    /// The next task to dispatch: from the flow with the least pass, its next lane in turn.
    mutating func dequeue() -> TaskKey? {
        while let least = heap.min {
            let flow = least.flow
            guard let lane = flows[flow].ring.popFirst() else {
                heap.popMin()
                flows[flow].isScheduled = false
                releaseFlowIfUnused(flow)
                continue
            }
            var served: TaskKey?
            while let key = lanes[lane].pop() {
                if removed.remove(key) != nil { continue }
                served = key
                break
            }
            if lanes[lane].isEmpty {
                releaseLane(lane)
            } else {
                flows[flow].ring.append(lane)
            }
            guard let key = served else { continue }  // the lane held only removed tasks
            virtualTime = flows[flow].pass
            flows[flow].pass += flows[flow].stride
            if !flows[flow].ring.isEmpty {
                heap.replaceMin(with: FlowPass(pass: flows[flow].pass, order: least.order, flow: flow))
            } else {
                heap.popMin()
                flows[flow].isScheduled = false
                releaseFlowIfUnused(flow)
            }
            count -= 1
            if count == 0 { removeAll() }
            return key
        }
        return nil
    }

    // MARK: Storage

    private mutating func makeLane(_ laneKey: String) -> Int {
        let shareClass =
            classes[laneKey]
            ?? ShareClass(
                client: ClientIdentity(peer: PeerIdentity(Array(laneKey.utf8)), key: nil), priority: 0)
        let flow = flowByClass[shareClass] ?? makeFlow(shareClass)
        flows[flow].lanes += 1
        let index = Self.store(TaskLane(batchID: laneKey, flow: flow), in: &lanes, reusing: &freeLanes)
        laneByBatch[laneKey] = index
        return index
    }

    private mutating func makeFlow(_ shareClass: ShareClass) -> Int {
        let flow = Flow(shareClass: shareClass, stride: Self.strideScale / max(1, shareClass.weight))
        let index = Self.store(flow, in: &flows, reusing: &freeFlows)
        flowByClass[shareClass] = index
        return index
    }

    /// Puts `element` in a free place of `storage` (or at its end); returns its index.
    private static func store<Element>(
        _ element: Element, in storage: inout [Element], reusing free: inout [Int]
    ) -> Int {
        if let index = free.popLast() {
            storage[index] = element
            return index
        }
        storage.append(element)
        return storage.count - 1
    }

    /// Lets go of a lane with nothing left in it.
    private mutating func releaseLane(_ lane: Int) {
        laneByBatch[lanes[lane].batchID] = nil
        lanes[lane].isScheduled = false
        freeLanes.append(lane)
        let flow = lanes[lane].flow
        flows[flow].lanes -= 1
        releaseFlowIfUnused(flow)
    }

    /// Lets go of a flow without lanes that is not waiting to be served.
    private mutating func releaseFlowIfUnused(_ flow: Int) {
        guard flows[flow].lanes == 0, !flows[flow].isScheduled,
            flowByClass[flows[flow].shareClass] == flow
        else { return }
        flowByClass[flows[flow].shareClass] = nil
        freeFlows.append(flow)
    }

    /// Empties the queue, with the keys it would skip; batch descriptions stay.
    private mutating func removeAll() {
        lanes = []
        freeLanes = []
        laneByBatch = [:]
        flows = []
        freeFlows = []
        flowByClass = [:]
        heap = PassHeap()
        removed = []
    }
}
