/// Messages a socket has not accepted yet, because a peer's queue reached its high-water mark, kept in
/// order until the socket is writable again. Confined to the socket's thread, like the socket.
struct SendBacklog {
    private var messages: [[[UInt8]]] = []
    private var start = 0

    /// Messages waiting.
    var count: Int { messages.count - start }
    /// Whether none waits (the socket accepted everything so far).
    var isEmpty: Bool { start == messages.count }

    /// What one attempt to send did.
    struct Outcome {
        /// The socket would block: messages wait here (poll for `ZMQ_POLLOUT`).
        var blocked = false
        /// Identities of the ROUTER peers messages could not be routed to (gone); those messages are dropped.
        var unroutable: [[UInt8]] = []
    }

    /// Sends `more` after the messages already waiting, in order, as far as the socket accepts; keeps
    /// the rest.
    mutating func send<Messages: Collection<[[UInt8]]>>(_ more: Messages, on socket: Socket) throws -> Outcome {
        guard isEmpty else {
            messages.append(contentsOf: more)
            return try flush(on: socket)
        }
        var outcome = Outcome()
        var index = more.startIndex
        while index != more.endIndex {
            switch try socket.send(more[index]) {
            case .sent:
                break
            case .unroutable:
                outcome.unroutable.append(more[index].first ?? [])
            case .wouldBlock:
                messages = Array(more[index...])
                start = 0
                outcome.blocked = true
                return outcome
            }
            more.formIndex(after: &index)
        }
        return outcome
    }

    /// Sends the messages waiting, in order, as far as the socket accepts.
    mutating func flush(on socket: Socket) throws -> Outcome {
        var outcome = Outcome()
        while start < messages.count {
            switch try socket.send(messages[start]) {
            case .sent:
                start += 1
            case .unroutable:
                outcome.unroutable.append(messages[start].first ?? [])
                start += 1
            case .wouldBlock:
                if start > 1_024 {
                    messages.removeFirst(start)
                    start = 0
                }
                outcome.blocked = true
                return outcome
            }
        }
        messages.removeAll(keepingCapacity: true)
        start = 0
        return outcome
    }

    /// Forgets the messages waiting (the socket closes); returns how many there were.
    mutating func dropAll() -> Int {
        defer {
            messages = []
            start = 0
        }
        return count
    }
}
