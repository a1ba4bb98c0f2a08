/// Why a CurveZMQ key could not be created, read or written; the description says which file and what
/// was expected, so that it can be shown to an operator as it is.
public struct CurveKeyError: Error, CustomStringConvertible, Sendable, Equatable {
    /// What went wrong, in one sentence that names the file when there is one.
    public let description: String

    /// Creates an error with an operator-facing `description`.
    public init(_ description: String) { self.description = description }

    /// libzmq was built without CurveZMQ (no libsodium or TweetNaCl).
    static let unsupported = CurveKeyError(
        "this libzmq (\(MessagingContext.libraryVersion)) was built without CurveZMQ support: install a libzmq built "
            + "with libsodium (Debian's libzmq5 is), or run without keys (--insecure) on a network you trust")
}
