import HTTPEndpoints

/// A body sent `chunkSize` bytes at a time, one piece every `interval` (the first at once): the tests'
/// slow and streamed downloads. Ends early when the server stops.
final class ChunkedBody: HTTPEndpointBody, @unchecked Sendable {
    // @unchecked: `next` is called by the connection's thread, one call at a time.
    private let body: [UInt8]
    private let chunkSize: Int
    private let interval: Duration
    private var offset = 0

    init(body: [UInt8], chunkSize: Int, interval: Duration) {
        self.body = body
        self.chunkSize = max(1, chunkSize)
        self.interval = interval
    }

    func next(stop: StopSignal) -> [UInt8]? {
        guard offset < body.count else { return nil }
        if offset > 0, !stop.wait(seconds: interval.inSeconds) { return nil }
        let end = min(body.count, offset + chunkSize)
        defer { offset = end }
        return Array(body[offset..<end])
    }

    func finish() {}
}

extension Duration {
    /// The duration in seconds, with its fraction.
    var inSeconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
