import Fetching
import Foundation
import Imaging
import Messaging

/// Settings of a worker.
public struct WorkerConfiguration: Sendable {
    /// The coordinators to reach, in order: the worker connects to the first and turns to the next,
    /// round-robin, when it has had no live connection to its own for `coordinatorSilenceTimeout`, or at once
    /// when its own refuses it as passive (a pair, docs/failover.md).
    public var coordinators: CoordinatorEndpoints
    /// The first coordinator's endpoint, e.g. `tcp://coordinator:5570` or `inproc://shiftwork`; setting it
    /// makes it the only one.
    public var coordinator: String {
        get { coordinators.first }
        set { coordinators = CoordinatorEndpoints(single: newValue) }
    }
    /// With several coordinators: how long the worker may have no live connection to its coordinator
    /// (none made since it connected, or the connection lost: the process killed, or its host silent to
    /// the ZMTP heartbeats for `CoordinatorHeartbeats.timeout`) before it turns to the next one and registers
    /// there (`ClusterDefaults.coordinatorSilenceTimeout`).
    public var coordinatorSilenceTimeout: Duration = ClusterDefaults.coordinatorSilenceTimeout
    /// Tasks run at once; the coordinator never sends more. More slots than `computeThreads` let downloads,
    /// the coordinator's round trip between a download and its tilt-shift, and sink writes overlap with
    /// the images being filtered (see ``defaultSlots(computeThreads:)``).
    public var slots: Int
    /// Threads for the CPU-bound part of tilt-shifts (decode, filter, encode): at most this many images are
    /// filtered at once, whatever the slots; at most `slots`. The cores this worker may use.
    public var computeThreads: Int
    /// The worker's name in status and logs; also its ZeroMQ identity. Unique per worker.
    public var workerID: String
    /// Download limits and whether local paths and `file://` URLs may be read.
    public var fetch: FetchConfiguration
    /// Threads the filter may use for one image.
    public var filterThreads: Int
    /// Pixel and byte limits for the images this worker decodes.
    public var limits: ImageLimits
    /// Socket options (frame size limit, linger, queue bounds).
    public var socketOptions: SocketOptions
    /// Bytes of downloaded images kept for the tilt-shifts the coordinator sends to this worker because
    /// it holds their input (locality).
    public var inputCacheBytes: Int
    /// How this worker takes chained tasks (default: on).
    public var chainedTasks = ChainedTasks.on
    /// Announce chained tasks (`WorkerHello.acceptsChainedTasks`): the coordinator may send a download with
    /// its tilt-shift, which this worker runs right after it in the same slot.
    var acceptsChainedTasks: Bool { chainedTasks != .off }
    /// Whether this worker gives back tasks waiting for its compute threads when asked (default: on).
    public var giveBack = GiveBack.on
    /// Announced in `WorkerHello.giveBackThreads`: the compute threads, or 0 (never asked).
    var giveBackThreads: UInt32 { giveBack == .on ? UInt32(computeThreads) : 0 }
    /// Hold a chained download's result back until its tilt-shift ends and send both in one message.
    var reportsChainedTasksTogether: Bool { chainedTasks == .together }

    /// Creates a configuration for a worker of `coordinator` alone: `computeThreads` defaults to the number of
    /// cores, `slots` to ``defaultSlots(computeThreads:)``.
    public init(
        coordinator: String,
        slots: Int? = nil,
        computeThreads: Int = ProcessInfo.processInfo.activeProcessorCount,
        workerID: String = WorkerConfiguration.defaultWorkerID(),
        fetch: FetchConfiguration = FetchConfiguration(),
        filterThreads: Int = 1,
        limits: ImageLimits = .default,
        socketOptions: SocketOptions = SocketOptions(),
        inputCacheBytes: Int = ClusterDefaults.inputCacheBytes
    ) {
        self.init(
            coordinators: CoordinatorEndpoints(single: coordinator), slots: slots, computeThreads: computeThreads,
            workerID: workerID, fetch: fetch, filterThreads: filterThreads, limits: limits,
            socketOptions: socketOptions, inputCacheBytes: inputCacheBytes)
    }

    /// Creates a configuration for a worker of the coordinators `coordinators` (it turns to the next on
    /// silence): `computeThreads` defaults to the number of cores, `slots` to ``defaultSlots(computeThreads:)``.
    public init(
        coordinators: CoordinatorEndpoints,
        slots: Int? = nil,
        computeThreads: Int = ProcessInfo.processInfo.activeProcessorCount,
        workerID: String = WorkerConfiguration.defaultWorkerID(),
        fetch: FetchConfiguration = FetchConfiguration(),
        filterThreads: Int = 1,
        limits: ImageLimits = .default,
        socketOptions: SocketOptions = SocketOptions(),
        inputCacheBytes: Int = ClusterDefaults.inputCacheBytes
    ) {
        self.coordinators = coordinators
        let computeThreads = max(1, computeThreads)
        self.slots = max(1, slots ?? Self.defaultSlots(computeThreads: computeThreads))
        self.computeThreads = min(computeThreads, self.slots)
        self.workerID = workerID
        self.fetch = fetch
        self.filterThreads = max(1, filterThreads)
        self.limits = limits
        self.socketOptions = socketOptions
        self.inputCacheBytes = max(0, inputCacheBytes)
    }

    /// Twice the compute threads: while one task per compute thread is filtered, as many more can download
    /// their image, wait for the coordinator's tilt-shift or write their output to a sink, so that a core
    /// never waits for the network or `fsync` (measured in docs/benchmarks.md, "The data path").
    public static func defaultSlots(computeThreads: Int) -> Int {
        2 * max(1, computeThreads)
    }

    /// `HOSTNAME-PID-RANDOM`: unique across restarts and across containers of one host.
    public static func defaultWorkerID() -> String {
        let random = UUID().uuidString.lowercased().prefix(6)
        return "\(ProcessInfo.processInfo.hostName)-\(ProcessInfo.processInfo.processIdentifier)-\(random)"
    }
}
