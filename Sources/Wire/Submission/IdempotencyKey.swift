/// The rule for ``SubmitBatch/idempotencyKey``, a key the client chooses so that a submission sent again
/// (after a timeout, a crash of the client) attaches to the batch the first one created instead of
/// running it twice. A rule of the protocol, so that clients and the coordinator check it the same way.
public enum IdempotencyKey {
    /// The longest key, in bytes.
    public static let maxLength = 128

    /// Why `key` cannot be used, or `nil` when it can: 1–128 characters of `A–Z a–z 0–9 . _ - : @`.
    public static func problem(_ key: String) -> String? {
        if key.isEmpty {
            return "the idempotency key is empty: give 1-\(maxLength) characters of A-Z a-z 0-9 . _ - : @"
        }
        if key.utf8.count > maxLength {
            return "the idempotency key has \(key.utf8.count) characters, more than \(maxLength): use a shorter one "
                + "(a UUID or a hash of what you submit)"
        }
        if let bad = key.unicodeScalars.first(where: { !isAllowed($0) }) {
            return
                "the idempotency key holds '\(bad.escaped(asASCII: true))', which keys may not: use only A-Z a-z 0-9 . _ - : @"
        }
        return nil
    }

    private static func isAllowed(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "A"..."Z", "a"..."z", "0"..."9", ".", "_", "-", ":", "@": true
        default: false
        }
    }
}
