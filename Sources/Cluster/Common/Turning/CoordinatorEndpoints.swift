import Foundation

/// The coordinators a worker or client may reach, in the order it tries them: one for a coordinator that
/// runs alone, two (or more) for a pair (docs/failover.md). Parsed from `--coordinator A,B` or
/// `SHIFTWORK_COORDINATOR=A,B`; a peer turns to the next endpoint, round-robin, when its own is silent.
public struct CoordinatorEndpoints: Sendable, Equatable, CustomStringConvertible {
    /// The endpoints, at least one, each once, in the order given.
    public let all: [String]

    /// The transports an endpoint may name (ZeroMQ's, as `SocketChannel` connects them).
    static let transports = ["tcp://", "ipc://", "inproc://"]

    /// The endpoints of `list`, a comma-separated list such as `tcp://a:5570,tcp://b:5570`. Spaces around
    /// an entry are ignored; an entry given twice counts once.
    ///
    /// - Throws: `CoordinatorEndpointsError` naming the empty entry or the malformed endpoint, and what a
    ///   good one looks like.
    public init(parsing list: String) throws {
        var endpoints: [String] = []
        for (position, entry) in list.split(separator: ",", omittingEmptySubsequences: false).enumerated() {
            let endpoint = entry.trimmingCharacters(in: .whitespaces)
            guard !endpoint.isEmpty else {
                throw CoordinatorEndpointsError.emptyEntry(position: position + 1, list: list)
            }
            guard Self.isWellFormed(endpoint) else { throw CoordinatorEndpointsError.malformed(endpoint: endpoint) }
            if !endpoints.contains(endpoint) { endpoints.append(endpoint) }
        }
        self.all = endpoints
    }

    /// Endpoints given one by one (the embedded API); duplicates count once.
    ///
    /// - Throws: `CoordinatorEndpointsError.none` for an empty list, `.malformed` for an endpoint without a transport.
    public init(_ endpoints: [String]) throws {
        guard !endpoints.isEmpty else { throw CoordinatorEndpointsError.none }
        try self.init(parsing: endpoints.joined(separator: ","))
    }

    /// One endpoint, taken as it is (checked by ZeroMQ when the socket connects), as before lists existed.
    public init(single endpoint: String) {
        self.all = [endpoint]
    }

    /// The first endpoint: where a peer connects first.
    public var first: String { all[0] }

    /// The endpoint after `index`, round-robin, with its index.
    public func next(after index: Int) -> (index: Int, endpoint: String) {
        let following = (index + 1) % all.count
        return (following, all[following])
    }

    /// Whether there is another endpoint to turn to.
    public var canTurn: Bool { all.count > 1 }

    public var description: String { all.joined(separator: ",") }

    /// A transport (`tcp://`, `ipc://`, `inproc://`) followed by an address without spaces or commas.
    private static func isWellFormed(_ endpoint: String) -> Bool {
        guard let transport = transports.first(where: { endpoint.hasPrefix($0) }) else { return false }
        let address = endpoint.dropFirst(transport.count)
        return !address.isEmpty && !address.contains(where: { $0 == " " || $0 == "\t" })
    }
}

/// Why a list of coordinator endpoints was refused.
public enum CoordinatorEndpointsError: Error, Equatable, CustomStringConvertible {
    /// The list is empty.
    case none
    /// An entry of the list is empty (`A,,B`, a leading or trailing comma).
    case emptyEntry(position: Int, list: String)
    /// An entry is not a ZeroMQ endpoint.
    case malformed(endpoint: String)

    public var description: String {
        switch self {
        case .none:
            "no coordinator endpoint given: give one, e.g. tcp://coordinator:5570, or a comma-separated list for a pair"
        case .emptyEntry(let position, let list):
            "the coordinator list '\(PrintableText.escape(list))' has an empty entry (number \(position)): "
                + "separate endpoints with single commas, e.g. tcp://a:5570,tcp://b:5570"
        case .malformed(let endpoint):
            "'\(PrintableText.escape(endpoint))' is not a coordinator endpoint: give tcp://HOST:PORT (or ipc://PATH, "
                + "inproc://NAME), e.g. tcp://coordinator:5570; separate several with commas"
        }
    }
}
