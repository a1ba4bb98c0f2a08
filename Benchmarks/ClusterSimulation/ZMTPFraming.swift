/// The bytes of ZeroMQ's wire protocol (ZMTP 3.1, https://rfc.zeromq.org/spec/37/) that a DEALER peer
/// with the NULL mechanism sends: what the simulated workers write on their TCP connections themselves,
/// instead of going through a libzmq socket (see `SimulatedWorkerGroup`). A libzmq ROUTER cannot tell
/// them from a libzmq DEALER's (`ZMTPDealerTests` holds them to a real one).
public enum ZMTPFraming {
    /// The greeting: signature, version 3.1, the NULL mechanism, as a client (64 bytes).
    public static let greeting: [UInt8] = {
        var bytes = [UInt8](repeating: 0, count: 64)
        bytes[0] = 0xFF
        bytes[9] = 0x7F
        bytes[10] = 3
        bytes[11] = 1
        for (offset, byte) in "NULL".utf8.enumerated() { bytes[12 + offset] = byte }
        return bytes
    }()

    /// The NULL mechanism's READY command of a DEALER socket with the routing identity `identity`.
    public static func ready(identity: [UInt8]) -> [UInt8] {
        var body: [UInt8] = [5] + Array("READY".utf8)
        appendProperty("Socket-Type", Array("DEALER".utf8), to: &body)
        appendProperty("Identity", identity, to: &body)
        var frame: [UInt8] = []
        appendFrame(body, command: true, more: false, to: &frame)
        return frame
    }

    /// The PONG command answering a PING whose context is `context` (ZMTP 3.1 heartbeats).
    public static func pong(context: ArraySlice<UInt8>) -> [UInt8] {
        var frame: [UInt8] = []
        appendFrame([4] + Array("PONG".utf8) + Array(context), command: true, more: false, to: &frame)
        return frame
    }

    /// Appends a one-frame message carrying `payload` (a frame's header, then the bytes) to `bytes`.
    public static func appendMessage(_ payload: UnsafeRawBufferPointer, to bytes: inout [UInt8]) {
        appendHeader(size: payload.count, command: false, more: false, to: &bytes)
        bytes.append(contentsOf: payload)
    }

    /// Appends a frame of `body` (a message frame, or a command) to `bytes`.
    static func appendFrame(_ body: [UInt8], command: Bool, more: Bool, to bytes: inout [UInt8]) {
        appendHeader(size: body.count, command: command, more: more, to: &bytes)
        bytes.append(contentsOf: body)
    }

    /// A frame's flags and size: one size byte up to 255, else eight (big-endian) with the LONG flag.
    static func appendHeader(size: Int, command: Bool, more: Bool, to bytes: inout [UInt8]) {
        let flags: UInt8 = (more ? 0x01 : 0) | (size > 255 ? 0x02 : 0) | (command ? 0x04 : 0)
        bytes.append(flags)
        if size > 255 {
            for shift in stride(from: 56, through: 0, by: -8) {
                bytes.append(UInt8(truncatingIfNeeded: UInt64(size) >> UInt64(shift)))
            }
        } else {
            bytes.append(UInt8(size))
        }
    }

    private static func appendProperty(_ name: String, _ value: [UInt8], to body: inout [UInt8]) {
        body.append(UInt8(name.utf8.count))
        body.append(contentsOf: name.utf8)
        for shift in stride(from: 24, through: 0, by: -8) {
            body.append(UInt8(truncatingIfNeeded: UInt32(value.count) >> UInt32(shift)))
        }
        body.append(contentsOf: value)
    }
}

/// Reads what a ZMTP 3 peer (a libzmq ROUTER) sends on a connection: its greeting, then frames; hands on
/// each whole message's last frame (the payload: a ROUTER sends a DEALER one frame per message here) and
/// each command. A pure state machine: bytes in, events out, so it is tested without sockets.
public struct ZMTPReader {
    /// What the peer sent.
    public enum Event {
        /// A message's last frame: the bytes are valid during the `handle` call only.
        case message(UnsafeRawBufferPointer)
        /// A command (READY, PING, ERROR...): its name and the bytes after the name.
        case command(name: String, body: ArraySlice<UInt8>)
    }

    /// Why the connection cannot go on.
    public enum Failure: Error, Equatable, CustomStringConvertible {
        /// The peer's greeting is not ZMTP 3 with the NULL mechanism.
        case badGreeting
        /// A frame larger than `maxFrameBytes`, or malformed.
        case badFrame

        public var description: String {
            switch self {
            case .badGreeting:
                "a greeting other than ZMTP 3 with the NULL mechanism (is the coordinator using CurveZMQ? "
                    + "the simulated workers speak to an --insecure coordinator only)"
            case .badFrame: "a malformed or oversized ZMTP frame"
            }
        }
    }

    private var greetingLeft = 64
    private var greeting: [UInt8] = []
    /// Bytes received and not yet handed on (a frame cut by the TCP segment).
    private var pending: [UInt8] = []
    private let maxFrameBytes: Int

    /// A reader that refuses frames above `maxFrameBytes`.
    public init(maxFrameBytes: Int = 256 << 20) {
        self.maxFrameBytes = maxFrameBytes
    }

    /// Reads `bytes` (what one `recv` gave) and hands every whole message and command in them to `handle`.
    public mutating func read(_ bytes: UnsafeRawBufferPointer, _ handle: (Event) -> Void) throws(Failure) {
        var input = bytes
        if greetingLeft > 0 {
            let taken = min(greetingLeft, input.count)
            greeting.append(contentsOf: input.prefix(taken))
            greetingLeft -= taken
            input = UnsafeRawBufferPointer(rebasing: input[taken...])
            if greetingLeft > 0 { return }
            guard greeting[0] == 0xFF, greeting[9] == 0x7F, greeting[10] >= 3,
                Array(greeting[12..<16]) == Array("NULL".utf8)
            else { throw .badGreeting }
        }
        if pending.isEmpty {
            // Most reads hold whole frames: parsed in place, and only a cut frame's start is kept.
            let used = try parse(input, handle).get()
            pending.append(contentsOf: input[used...])
        } else {
            pending.append(contentsOf: input)
            let used = try pending.withUnsafeBytes { parse($0, handle) }.get()
            pending.removeSubrange(0..<used)
        }
    }

    /// Parses whole frames from the start of `bytes`; returns how many bytes they took.
    private func parse(_ bytes: UnsafeRawBufferPointer, _ handle: (Event) -> Void) -> Result<Int, Failure> {
        var position = 0
        while bytes.count - position >= 2 {
            let flags = bytes[position]
            guard flags & 0xF8 == 0 else { return .failure(.badFrame) }
            let long = flags & 0x02 != 0
            let headerSize = long ? 9 : 2
            guard bytes.count - position >= headerSize else { break }
            var size = 0
            if long {
                var value: UInt64 = 0
                for offset in 1...8 { value = value << 8 | UInt64(bytes[position + offset]) }
                guard value <= UInt64(maxFrameBytes) else { return .failure(.badFrame) }
                size = Int(value)
            } else {
                size = Int(bytes[position + 1])
            }
            guard bytes.count - position - headerSize >= size else { break }
            let body = UnsafeRawBufferPointer(rebasing: bytes[(position + headerSize)..<(position + headerSize + size)])
            position += headerSize + size
            if flags & 0x04 != 0 {
                guard let nameSize = body.first, body.count > Int(nameSize) else { return .failure(.badFrame) }
                let name = String(decoding: body[1...Int(nameSize)], as: UTF8.self)
                handle(.command(name: name, body: ArraySlice(body[(Int(nameSize) + 1)...])))
            } else if flags & 0x01 == 0 {
                handle(.message(body))  // the last frame; earlier ones (none from a ROUTER here) are skipped
            }
        }
        return .success(position)
    }
}
