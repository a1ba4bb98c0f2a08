import Foundation
import Messaging

/// Settings of a coordinator.
public struct CoordinatorConfiguration: Sendable {
    /// Endpoints the coordinator's ROUTER socket binds, e.g. `tcp://0.0.0.0:5570` or `inproc://shiftwork`.
    public var listen: [String]
    /// How often workers are asked to send heartbeats.
    public var heartbeatInterval: Duration
    /// Silence after which a worker is declared dead and its tasks requeued.
    public var workerTimeout: Duration
    /// Socket options (frame size limit, linger, queue bounds).
    public var socketOptions: SocketOptions
    /// At most this many downloads from one origin host run at once, across all workers (politeness
    /// towards the servers the images come from).
    public var maxDownloadsPerHost: Int
    /// Where the journal and the finished results are kept, so that a restarted coordinator carries on
    /// with every accepted batch; `nil` keeps everything in memory only.
    public var dataDirectory: URL?
    /// Batches with more items are refused.
    public var maxBatchItems: Int
    /// A client whose unfinished items would exceed this is refused until some finish.
    public var maxPendingItemsPerClient: Int
    /// Per client (its CurveZMQ key, or its connection without CurveZMQ): a submission that would take its
    /// unfinished items above this is refused (`--max-queued-items-per-client`).
    public var maxQueuedItemsPerClient: Int = ClusterDefaults.maxQueuedItemsPerClient
    /// Per client: a submission beyond this many batches kept for it (running, or finished and kept) is
    /// refused (`--max-batches-per-client`).
    public var maxBatchesPerClient: Int = ClusterDefaults.maxBatchesPerClient
    /// CurveZMQ: the coordinator's keys and the allow-list (`nil`: no authentication, no encryption).
    public var authentication: CoordinatorAuthentication?
    /// How many finished batches are kept for status and `results`, and for how long.
    public var retention: BatchRetention
    /// How long one attempt of a task may run on its worker before the coordinator cancels it there and
    /// retries or fails it ("timed out after N s"); see ``defaultTaskTimeout``.
    public var taskTimeout: Duration = Self.defaultTaskTimeout
    /// How waiting tasks take turns for worker slots (`--scheduling`): fair share (the default) or FIFO.
    public var scheduling: SchedulingPolicy = .fairShare
    /// One of a primary/backup pair (`--ha`): `nil` runs alone.
    public var pair: PairConfiguration?

    /// Creates a configuration listening on `listen`.
    public init(
        listen: [String] = [ClusterDefaults.listenEndpoint],
        heartbeatInterval: Duration = ClusterDefaults.heartbeatInterval,
        workerTimeout: Duration = ClusterDefaults.workerTimeout,
        socketOptions: SocketOptions = SocketOptions(),
        maxDownloadsPerHost: Int = ClusterDefaults.maxDownloadsPerHost,
        dataDirectory: URL? = nil,
        maxBatchItems: Int = ClusterDefaults.maxBatchItems,
        maxPendingItemsPerClient: Int = ClusterDefaults.maxPendingItemsPerClient,
        authentication: CoordinatorAuthentication? = nil,
        retention: BatchRetention = BatchRetention()
    ) {
        self.retention = retention
        self.authentication = authentication
        self.listen = listen
        self.heartbeatInterval = heartbeatInterval
        self.workerTimeout = workerTimeout
        self.socketOptions = socketOptions
        self.maxDownloadsPerHost = max(1, maxDownloadsPerHost)
        self.dataDirectory = dataDirectory
        self.maxBatchItems = min(max(1, maxBatchItems), MessageBounds.maxItemsPerBatch)
        self.maxPendingItemsPerClient = max(1, maxPendingItemsPerClient)
    }
}

extension CoordinatorConfiguration {
    /// This configuration with per-client limits (each at least 1).
    public func limitingClients(queuedItems: Int, batches: Int) -> CoordinatorConfiguration {
        var configuration = self
        configuration.maxQueuedItemsPerClient = max(1, queuedItems)
        configuration.maxBatchesPerClient = max(1, batches)
        return configuration
    }

    /// This configuration as one of a pair: its heartbeat is at most a third of the failover timeout.
    public func paired(_ pair: PairConfiguration?) -> CoordinatorConfiguration {
        var configuration = self
        configuration.pair = pair
        if let pair { configuration.heartbeatInterval = pair.heartbeat(atMost: heartbeatInterval) }
        return configuration
    }

    /// This configuration with `policy` for its waiting tasks.
    public func scheduled(_ policy: SchedulingPolicy) -> CoordinatorConfiguration {
        var configuration = self
        configuration.scheduling = policy
        return configuration
    }
}
