/// The messages a ``SocketChannel`` received, in order, in groups: each element holds every message its
/// socket's thread read in one go (at least one). Bounded: it holds at most the channel's high watermark
/// of messages (``InboundWatermarks``); while it is full the thread stops reading, so a slow consumer
/// slows the peer down instead of growing memory. One consumer: iterate from one task at a time.
///
/// Ends when the channel is closed (after the messages already held), or for a consumer whose task is
/// cancelled while it waits.
public struct SocketInbound: AsyncSequence, Sendable {
    public typealias Element = [[[UInt8]]]
    public typealias Failure = Never
    let buffer: InboundBuffer

    public func makeAsyncIterator() -> Iterator {
        Iterator(buffer: buffer)
    }

    public struct Iterator: AsyncIteratorProtocol, Sendable {
        public typealias Element = [[[UInt8]]]
        public typealias Failure = Never
        let buffer: InboundBuffer

        public mutating func next() async -> [[[UInt8]]]? {
            await buffer.next(isolation: nil)
        }

        public mutating func next(isolation actor: isolated (any Actor)?) async -> [[[UInt8]]]? {
            await buffer.next(isolation: actor)
        }
    }
}

/// The messages of a ``SocketChannel`` one by one: its ``SocketChannel/messageBatches`` taken apart.
public struct SocketMessages: AsyncSequence, Sendable {
    public typealias Element = [[UInt8]]
    public typealias Failure = Never
    let batches: SocketInbound

    public func makeAsyncIterator() -> Iterator {
        Iterator(batches: batches.makeAsyncIterator())
    }

    public struct Iterator: AsyncIteratorProtocol {
        public typealias Element = [[UInt8]]
        public typealias Failure = Never
        var batches: SocketInbound.Iterator
        var current: [[[UInt8]]] = []
        var index = 0

        public mutating func next() async -> [[UInt8]]? {
            while index == current.count {
                guard let batch = await batches.next() else { return nil }
                current = batch
                index = 0
            }
            defer { index += 1 }
            return current[index]
        }

        public mutating func next(isolation actor: isolated (any Actor)?) async -> [[UInt8]]? {
            while index == current.count {
                guard let batch = await batches.next(isolation: actor) else { return nil }
                current = batch
                index = 0
            }
            defer { index += 1 }
            return current[index]
        }
    }
}
