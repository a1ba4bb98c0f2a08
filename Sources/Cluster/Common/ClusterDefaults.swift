/// Defaults shared by the coordinator, workers and clients.
public enum ClusterDefaults {
    /// Where `shiftwork coordinator` listens when `--listen` is not given: every address, IPv4 and IPv6
    /// (dual stack; IPv4 alone on a host without IPv6).
    public static let listenEndpoint = "tcp://*:5570"
    /// Where workers and clients look for the coordinator when neither a flag nor `SHIFTWORK_COORDINATOR` says.
    public static let coordinatorEndpoint = "tcp://127.0.0.1:5570"
    /// How often workers send a heartbeat.
    public static let heartbeatInterval: Duration = .seconds(1)
    /// How long a worker may stay silent before the coordinator declares it dead and requeues its tasks.
    public static let workerTimeout: Duration = .seconds(5)
    /// How long a client with several coordinators may have no live connection to its coordinator before
    /// it turns to the next (shorter than the response timeouts, so that a request sent to a dead
    /// coordinator is answered by the next one in time).
    public static let clientSilenceTimeout: Duration = .seconds(3)
    /// How long a worker with several coordinators may have no live connection to its coordinator before it
    /// turns to the next: as long as a pair's default failover timeout (`--failover-timeout`), so that the
    /// passive one can take over on its hello as soon as the rules allow (docs/failover.md). A turn to a
    /// coordinator that is still passive costs one refusal and a turn back.
    public static let coordinatorSilenceTimeout: Duration = .seconds(2)
    /// Downloads from one origin host that may run at once across the cluster (browsers use 6).
    public static let maxDownloadsPerHost = 6
    /// Bytes of downloaded images a worker keeps for the tilt-shifts sent to it (`--input-cache-mb`).
    public static let inputCacheBytes = 256 << 20
    /// How deep manifests may nest (a manifest listing manifests listing images is 2).
    public static let maxManifestDepth = 2
    /// The most items one batch may have (`--max-batch-items`).
    public static let maxBatchItems = 100_000
    /// The most unfinished items one client may have (`--max-pending-items-per-client`).
    public static let maxPendingItemsPerClient = 1_000_000
    /// The most unfinished items one client (its CurveZMQ key, or its connection without CurveZMQ) may have
    /// (`--max-queued-items-per-client`): two and a half batches of the largest size, and a quarter of what
    /// one connection may have pending, so that one client cannot fill the coordinator for every other.
    public static let maxQueuedItemsPerClient = 250_000
    /// The most batches the coordinator keeps for one client, running or finished and kept for status
    /// (`--max-batches-per-client`): ten times the finished batches kept for everyone, far above what a
    /// person submits at once, low enough that one client's batches (an operation group each) stay small.
    public static let maxBatchesPerClient = 1_000
    /// How many finished batches the coordinator keeps for status and results (`--keep-finished-batches`).
    public static let keepFinishedBatches = 100
    /// How long the coordinator keeps a finished batch for status and results (`--keep-finished-for`).
    public static let keepFinishedFor: Duration = .seconds(3600)
    /// The largest local file a client uploads (`UploadMetadata.size`): the workers' image limit
    /// (`ImageLimits.maxBytes`, 100 MiB). The client refuses a larger file before sending anything.
    public static let uploadFileBytes: UInt64 = 100 << 20
    /// The uploaded bytes the coordinator asks for and holds at once (`--upload-window-mb`): 256 MiB.
    public static let uploadWindowBytes: UInt64 = 256 << 20
}
