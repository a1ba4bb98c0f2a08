import Wire

/// The bound of every number, string and list a peer sends, in one place, and the checks that apply them
/// where a message is taken (`MessageBounds+Checks`): the coordinator checks what workers and clients send
/// before it acts on it, a worker checks its assignments before it runs them, a client checks the
/// coordinator's answers before it sizes anything by them.
///
/// Decoding already bounds a message's total size (the socket's `--max-message-mb`); these bound what is
/// *inside* a well-formed message, so that a value no honest peer sends (a `slots` of 2³²−1, a megabyte
/// long ID, 100,000 `holding` entries, an item count that would make a client allocate gigabytes) is
/// refused with a reason naming the field and its limit, never trusted: no unbounded allocation, no loop
/// to a count from the network, no arithmetic that traps. docs/protocol.md ("Bounds") lists them.
public enum MessageBounds {
    /// Request, batch, task and coordinator IDs, idempotency keys (UTF-8 bytes): the coordinator makes IDs
    /// of a few dozen bytes, clients UUIDs.
    public static let maxIDBytes = 256
    /// Files one `UploadRequest` may ask for (a client drops a larger request).
    public static let maxUploadsPerRequest = 8192
    /// A worker ID (`PeerInputRules.maxWorkerIDBytes`).
    public static let maxWorkerIDBytes = PeerInputRules.maxWorkerIDBytes
    /// A worker's host name (DNS allows 253).
    public static let maxHostnameBytes = 255
    /// A worker's software version string.
    public static let maxVersionBytes = 128
    /// Sources, sinks, output locations (`PeerInputRules.maxSourceBytes`).
    public static let maxPathBytes = PeerInputRules.maxSourceBytes
    /// An S3-compatible endpoint URL.
    public static let maxEndpointBytes = 2048
    /// An item's output name or a task's sink name (a file name without extension, a path below a prefix).
    public static let maxNameBytes = 1024
    /// A media type (`image/jpeg`).
    public static let maxMediaTypeBytes = 255
    /// Free text: a failure's message, a cancel's reason.
    public static let maxTextBytes = 65_536
    /// Warnings of one output, and the bytes of each.
    public static let maxWarnings = 64
    public static let maxWarningBytes = 4096
    /// A worker's slots (`PeerInputRules.maxWorkerSlots`), compute threads (`give_back_threads`) and tasks
    /// running (`Heartbeat.running`).
    public static let maxWorkerSlots = PeerInputRules.maxWorkerSlots
    /// Tasks a worker holds at once (`Heartbeat.holding`), results or assignments in one batch message: two
    /// per slot at most (a download and the tilt-shift chained to it).
    public static let maxHeldTasks = 2 * PeerInputRules.maxWorkerSlots
    /// Injected inputs of one assignment (a tilt-shift has one).
    public static let maxInputsPerAssignment = 16
    /// An image side in pixels, as a result reports it (the decoders refuse far less).
    public static let maxImageSide: UInt32 = 1 << 20
    /// An output's size in bytes as a result reports it when the bytes did not travel (1 TiB).
    public static let maxOutputBytes: UInt64 = 1 << 40
    /// Items of one batch as any peer may say (a ceiling of `--max-batch-items`): a client sizes its
    /// tables by the counts a coordinator announces only up to this.
    public static let maxItemsPerBatch = 10_000_000
    /// Encoder qualities (0: the format's default).
    public static let maxQuality: UInt32 = 100
    /// A blur radius (Gaussian sigma) in pixels: 0, or 0.5 up to this (`TiltShiftParameters.maxBlurRadius`).
    public static let maxBlurRadius: Float = 500

    /// A message refused for a value outside its bound: which message and field, and why.
    public struct Violation: Error, Equatable, Sendable, CustomStringConvertible {
        /// The message's type as the proto names it, e.g. `SubmitBatch`.
        public let message: String
        /// The field, as the proto names it, e.g. `SubmitBatch.items[3].output_name`; indexes are dropped in
        /// `counterField` (a label of the metrics).
        public let field: String
        /// How the refusal is coded: `.limit` for a size or count over its limit, `.invalidRequest` for a
        /// value outside its range (a NaN, an unknown kind).
        public let code: RefusalCode
        /// What was wrong and the limit, for the peer and the log.
        public let reason: String

        public var description: String { reason }

        /// `field` without element indexes, for counting (`shiftwork_messages_refused_total{field}`).
        public var counterField: String {
            var result = ""
            var skipping = false
            for character in field {
                if character == "[" {
                    skipping = true
                } else if character == "]" {
                    skipping = false
                } else if !skipping {
                    result.append(character)
                }
            }
            return result
        }
    }

    /// Checks one message's fields, stopping at the first violation (`check(_:)` functions throw it).
    struct Checker {
        let message: String

        func violation(_ field: String, _ code: RefusalCode, _ reason: String) -> Violation {
            Violation(message: message, field: field, code: code, reason: "\(field) \(reason)")
        }

        /// `text` is at most `max` UTF-8 bytes.
        func bytes(_ text: String, _ field: @autoclosure () -> String, max: Int) throws(Violation) {
            let count = text.utf8.count
            guard count > max else { return }
            throw violation(field(), .limit, "is \(count) bytes long, more than the limit of \(max)")
        }

        /// A list has at most `max` elements.
        func count(_ count: Int, _ field: @autoclosure () -> String, max: Int) throws(Violation) {
            guard count > max else { return }
            throw violation(field(), .limit, "has \(count) entries, more than the limit of \(max)")
        }

        /// A number is at most `max`; `advice` says what to do instead, when there is more to say than the limit.
        func atMost<T: BinaryInteger>(
            _ value: T, _ field: @autoclosure () -> String, max: T, advice: String = ""
        ) throws(Violation) {
            guard value > max else { return }
            throw violation(
                field(), .limit, "is \(value), more than the limit of \(max)\(advice.isEmpty ? "" : ": \(advice)")")
        }

        /// A relative output path (`OutputPath`): no `..`, no absolute path, no NUL, within its bounds.
        func outputPath(_ name: String, _ field: @autoclosure () -> String) throws(Violation) {
            guard let problem = OutputPath.problem(name) else { return }
            throw violation(field(), .invalidRequest, "is refused: \(problem)")
        }

        /// A fraction is finite and within 0...1.
        func fraction(_ value: Float, _ field: @autoclosure () -> String) throws(Violation) {
            guard !(value.isFinite && value >= 0 && value <= 1) else { return }
            throw violation(field(), .invalidRequest, "is \(value), outside 0...1")
        }
    }
}
