import Fetching
import Foundation
import Imaging
import Messaging

/// Settings of a worker.
public struct WorkerConfiguration: Sendable {
    /// The coordinator's endpoint, e.g. `tcp://coordinator:5570` or `inproc://shiftwork`.
    public var coordinator: String
    /// Tasks run at once; the coordinator never sends more.
    public var slots: Int
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

    /// Creates a configuration for a worker of `coordinator`.
    public init(
        coordinator: String,
        slots: Int = ProcessInfo.processInfo.activeProcessorCount,
        workerID: String = WorkerConfiguration.defaultWorkerID(),
        fetch: FetchConfiguration = FetchConfiguration(),
        filterThreads: Int = 1,
        limits: ImageLimits = .default,
        socketOptions: SocketOptions = SocketOptions(),
        inputCacheBytes: Int = ClusterDefaults.inputCacheBytes
    ) {
        self.coordinator = coordinator
        self.slots = max(1, slots)
        self.workerID = workerID
        self.fetch = fetch
        self.filterThreads = max(1, filterThreads)
        self.limits = limits
        self.socketOptions = socketOptions
        self.inputCacheBytes = max(0, inputCacheBytes)
    }

    /// `HOSTNAME-PID-RANDOM`: unique across restarts and across containers of one host.
    public static func defaultWorkerID() -> String {
        let random = UUID().uuidString.lowercased().prefix(6)
        return "\(ProcessInfo.processInfo.hostName)-\(ProcessInfo.processInfo.processIdentifier)-\(random)"
    }
}
