/// How many received messages a ``SocketChannel`` holds for its consumer before it stops reading its
/// socket, and how few before it reads again (the high and low watermarks of NIO's
/// `NIOAsyncSequenceProducer`).
///
/// While the consumer lags, the socket's thread leaves further messages in libzmq, whose own receive
/// high-water mark then makes the peer's sends wait: memory stays bounded end to end, and nothing is lost.
public struct InboundWatermarks: Sendable, Equatable {
    /// The most messages held for the consumer; reading stops when it is reached.
    public let high: Int
    /// Reading resumes once the consumer has taken the held messages down to this many.
    public let low: Int

    /// - Precondition: `1 <= high` and `0 <= low < high` (constants of the caller, not input).
    public init(high: Int, low: Int) {
        precondition(high >= 1 && low >= 0 && low < high, "watermarks need 0 <= low < high")
        self.high = high
        self.low = low
    }

    /// The default: as many messages as one wake-up of the socket's thread takes at most, reading again
    /// once a quarter of them is left.
    public static let standard = InboundWatermarks(high: 4_096, low: 1_024)
}
