/// The cluster's throughput and queue over the last minutes, for the dashboard's chart: a ring of
/// samples the HTTP server takes every few seconds from the status the coordinator reports.
public struct ThroughputHistory: Sendable, Equatable {
    /// One moment's figures.
    public struct Sample: Sendable, Equatable {
        /// Milliseconds since 1970.
        public var unixMilliseconds: Int64
        /// Tasks finished per second (the coordinator's 10-second rate).
        public var tasksPerSecond: Double
        /// Tasks accepted and not started.
        public var queuedTasks: UInt32
        /// Tasks on workers.
        public var runningTasks: UInt32
        /// Connected workers.
        public var workers: Int

        public init(
            unixMilliseconds: Int64, tasksPerSecond: Double, queuedTasks: UInt32, runningTasks: UInt32, workers: Int
        ) {
            self.unixMilliseconds = unixMilliseconds
            self.tasksPerSecond = tasksPerSecond
            self.queuedTasks = queuedTasks
            self.runningTasks = runningTasks
            self.workers = workers
        }
    }

    /// The most samples kept; the oldest goes first.
    public let capacity: Int
    private var ring: [Sample] = []
    private var next = 0

    /// An empty history of at most `capacity` samples (at least 1).
    public init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// Adds `sample`, dropping the oldest when full.
    public mutating func record(_ sample: Sample) {
        if ring.count < capacity {
            ring.append(sample)
        } else {
            ring[next] = sample
        }
        next = (next + 1) % capacity
    }

    /// The samples, oldest first.
    public var samples: [Sample] {
        ring.count < capacity ? ring : Array(ring[next...] + ring[..<next])
    }

    /// The samples as JSON values: `[{"t": ms, "tps": x, "queued": n, "running": n, "workers": n}]`.
    package var jsonObject: JSONValue {
        .array(
            samples.map { sample in
                .object([
                    ("t", .integer(Int(sample.unixMilliseconds))), ("tps", .number(sample.tasksPerSecond)),
                    ("queued", .unsigned(UInt64(sample.queuedTasks))),
                    ("running", .unsigned(UInt64(sample.runningTasks))),
                    ("workers", .integer(sample.workers)),
                ])
            })
    }
}
