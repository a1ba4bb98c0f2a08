import Fetching
import Logging

/// A log handler that escapes the message and every metadata value (``PrintableText``) before handing
/// them to the handler it wraps, so that a value from the network can neither forge a log line nor send
/// escape sequences to whoever reads the log.
///
/// Escaping here, where every line is written, covers each of the many places that log a worker ID, a
/// source or an error: none of them can forget it.
public struct EscapingLogHandler: LogHandler {
    private var wrapped: any LogHandler

    /// Escapes for `wrapped` (e.g. `StreamLogHandler.standardError(label:)`).
    public init(wrapping wrapped: any LogHandler) {
        self.wrapped = wrapped
    }

    public var logLevel: Logger.Level {
        get { wrapped.logLevel }
        set { wrapped.logLevel = newValue }
    }

    public var metadata: Logger.Metadata {
        get { wrapped.metadata }
        set { wrapped.metadata = Self.escape(newValue) }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { wrapped[metadataKey: key] }
        set { wrapped[metadataKey: key] = newValue.map(Self.escape) }
    }

    public var metadataProvider: Logger.MetadataProvider? {
        get { wrapped.metadataProvider }
        set { wrapped.metadataProvider = newValue }
    }

    public func log(event: LogEvent) {
        var event = event
        event.message = Logger.Message(stringLiteral: Self.shown(event.message.description))
        event.metadata = event.metadata.map(Self.escape)
        event.error = event.error.map { EscapedError(description: Self.shown(String(describing: $0))) }
        wrapped.log(event: event)
    }

    /// `text` with the credentials of any URL in it masked (``SourceRedaction``), then escaped.
    private static func shown(_ text: String) -> String {
        PrintableText.escape(SourceRedaction.redactURLs(in: text))
    }

    private static func escape(_ metadata: Logger.Metadata) -> Logger.Metadata {
        metadata.mapValues(escape)
    }

    private static func escape(_ value: Logger.Metadata.Value) -> Logger.Metadata.Value {
        switch value {
        case .string(let text): .string(shown(text))
        case .stringConvertible(let convertible): .string(shown(convertible.description))
        case .dictionary(let dictionary): .dictionary(escape(dictionary))
        case .array(let array): .array(array.map(escape))
        }
    }
}

/// An error attached to a log event, as its escaped description.
private struct EscapedError: Error, CustomStringConvertible {
    let description: String
}
