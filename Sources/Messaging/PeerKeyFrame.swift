/// The last frame of a message received on a ``SocketChannel`` opened with `appendsPeerKey`: the
/// CurveZMQ public key its sender authenticated with, as the socket's own thread read it from libzmq.
///
/// A peer cannot forge it: libzmq attaches the key the ZAP handler admitted at the handshake to every
/// message of that connection, and the frame is added after the message's own frames (a peer that sends
/// one more frame only makes the message one frame longer).
public enum PeerKeyFrame {
    /// The message's own frames and its sender's key: `nil` without CurveZMQ (an empty key frame) or when
    /// the frame is not a key. `frames` must be a message of a channel opened with `appendsPeerKey`.
    public static func split(_ frames: [[UInt8]]) -> (frames: ArraySlice<[UInt8]>, key: CurvePublicKey?) {
        guard let last = frames.last else { return (frames[...], nil) }
        // The frame comes from the socket's own thread, holding what the ZAP handler answered (a key's Z85
        // text): its length is checked, not its decoding, once per message on the coordinator's hot path.
        guard last.count == Z85Key.length else { return (frames.dropLast(), nil) }
        return (frames.dropLast(), CurvePublicKey(validated: String(decoding: last, as: UTF8.self)))
    }
}
