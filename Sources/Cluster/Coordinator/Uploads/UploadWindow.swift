import Wire

/// The coordinator's rules for uploaded files (issue #29, docs/protocol.md "Uploads") as a value: which
/// items' bytes to ask of which client, within how many bytes, and what to do with the bytes that come.
/// Events in, decisions out; no sockets, files or clocks (the core carries the decisions out, the actor
/// the I/O), so every rule is tested event by event (`UploadWindowTests`).
///
/// An upload item goes **awaiting → asked → held** (without a spool: in memory until the item finishes)
/// or **awaiting → asked → spooled → loading → held** (with `--data-dir`: on disk, read back when the
/// item wants it). The window bounds what is asked and not received, plus (without a spool) what is held;
/// with a spool, what is held is bounded by the same number on its own. One file larger than the window
/// goes alone, when nothing else is asked or held. Bytes leave when the item finishes (`release`).
struct UploadWindow {
    /// An item, by batch and index.
    struct Item: Hashable, Sendable {
        let batchID: String
        let index: Int
    }

    /// Where an item's bytes are.
    enum State: Equatable {
        /// Not asked for yet (or asked of a client that went away).
        case awaiting
        /// Asked of this connection; not received yet.
        case asked(PeerIdentity)
        /// Received, being written to the spool (`Decision.spool`).
        case spooling
        /// Written to the spool; not in memory.
        case spooled
        /// Being read back from the spool (`Decision.load`).
        case loading
        /// In memory, ready for the item's assignment.
        case held
    }

    /// What the core does after an event.
    enum Decision: Equatable {
        /// Send this request to this connection (the credit granted).
        case ask(PeerIdentity, UploadRequest)
        /// Write these bytes to the spool (`DATA/uploads/BATCH/INDEX-CRC`); `spoolWritten` or
        /// `spoolFailed` follows.
        case spool(Item, [UInt8], crc32c: UInt32)
        /// Read this item's bytes back from the spool; `loaded` or `loadFailed` follows.
        case load(Item, size: UInt64)
        /// The item's bytes are held now: its tilt-shift may go (`input(for:)`).
        case ready(Item)
        /// The item cannot get its bytes: fail it (`FAILURE_CODE_UPLOAD`) with this message.
        case fail(Item, String)
        /// Delete the item's spool file (it finished).
        case unspool(Item)
    }

    /// What an item is: its announced size and path (as the client submitted it), and where its bytes are.
    private struct Entry {
        let metadata: UploadMetadata
        let path: String
        var state: State = .awaiting
        /// The started item waits for its bytes (a spooled item is read back only then).
        var wanted = false
        var crc32c: UInt32 = 0
        var bytes: [UInt8] = []

        var isAsked: Bool {
            if case .asked = state { return true }
            return false
        }
        /// Not in the coordinator's keeping yet: awaiting, asked, or not yet on the spool's disk.
        var isAwaiting: Bool { state == .awaiting || state == .spooling || isAsked }
        /// The bytes this entry counts in `heldBytes` (announced while being read back, actual once held).
        var heldSize: UInt64 {
            switch state {
            case .held: UInt64(bytes.count)
            case .loading: metadata.size
            default: 0
            }
        }
    }

    /// One batch's upload items and the connection that answers for them.
    private struct Batch {
        var entries: [Int: Entry] = [:]
        /// The awaiting items, highest index first (the next to ask is `last`); may hold stale indexes.
        var toAsk: [Int] = []
        /// Spooled items that are wanted, in the order they were wanted; may hold stale indexes.
        var toLoad: [Int] = []
        /// Who is asked: the connection that submitted the batch or attached to it last (`nil`: none now).
        var client: PeerIdentity?
        /// Items not in the coordinator's keeping yet (`Entry.isAwaiting`).
        var awaitingCount = 0

        /// Moves an entry to `state`, keeping the counts and the queue of items to ask.
        mutating func set(_ index: Int, to state: State) {
            guard let entry = entries[index] else { return }
            awaitingCount -= entry.isAwaiting ? 1 : 0
            entries[index]?.state = state
            awaitingCount += entries[index]?.isAwaiting == true ? 1 : 0
            if state == .awaiting { queueToAsk(index) }
            if state == .spooled && entry.wanted { toLoad.append(index) }
        }

        mutating func queueToAsk(_ index: Int) {
            // Highest first: the position after every larger index.
            var low = 0
            var high = toAsk.count
            while low < high {
                let middle = (low + high) / 2
                if toAsk[middle] > index { low = middle + 1 } else { high = middle }
            }
            toAsk.insert(index, at: low)
        }
    }

    /// The window, in bytes (`--upload-window-mb`).
    let limitBytes: UInt64
    /// Received bytes go to the coordinator's data directory (`--data-dir`).
    let spools: Bool
    private var batches: [String: Batch] = [:]
    /// Batches in the order they came: earlier batches are asked first.
    private var batchOrder: [String] = []
    /// Bytes asked for and not received yet.
    private(set) var askedBytes: UInt64 = 0
    /// Bytes in memory (held or being read back from the spool).
    private(set) var heldBytes: UInt64 = 0

    init(limitBytes: UInt64 = ClusterDefaults.uploadWindowBytes, spools: Bool) {
        self.limitBytes = max(1, limitBytes)
        self.spools = spools
    }

    /// The items `batchID` has to upload and where each stands (for status and tests).
    func state(of item: Item) -> State? { batches[item.batchID]?.entries[item.index]?.state }

    /// Whether `item` is an upload item whose bytes the coordinator does not hold yet.
    func isAwaitingBytes(_ item: Item) -> Bool { batches[item.batchID]?.entries[item.index]?.isAwaiting == true }

    /// Whether `item` is an upload item of a batch this window knows.
    func isUpload(_ item: Item) -> Bool { state(of: item) != nil }

    /// The items of `batchID` whose bytes the coordinator does not hold yet (awaiting, asked, being spooled).
    func awaitingCount(of batchID: String) -> Int { batches[batchID]?.awaitingCount ?? 0 }

    // MARK: Events

    /// A batch's upload items (unfinished ones), each with what the client announced and its path.
    /// `client`: the connection to ask (`nil` after a restart: the first to attach is asked). With a
    /// spool, `spooled` items were received by an earlier run of the coordinator: read back when wanted
    /// (a file that is gone makes the item awaiting again, `loadFailed`).
    mutating func add(
        batchID: String, items: [(index: Int, metadata: UploadMetadata, path: String)], client: PeerIdentity?,
        spooled: Set<Int> = []
    ) -> [Decision] {
        guard !items.isEmpty else { return [] }
        var batch = batches[batchID] ?? Batch()
        if batches[batchID] == nil { batchOrder.append(batchID) }
        for item in items.sorted(by: { $0.index > $1.index }) where batch.entries[item.index] == nil {
            var entry = Entry(metadata: item.metadata, path: item.path)
            if spools && spooled.contains(item.index) {
                entry.state = .spooled
            } else {
                batch.toAsk.append(item.index)  // highest first, as the queue keeps them
                batch.awaitingCount += 1
            }
            batch.entries[item.index] = entry
        }
        batch.toAsk.sort(by: >)
        if let client { batch.client = client }
        batches[batchID] = batch
        return grant()
    }

    /// A connection attached to the batch (its submitter again, `submit --key`, `results`, `retry`): it is
    /// asked from now on, and what was asked of another connection (gone, or about to be) is asked again.
    mutating func attach(_ batchID: String, client: PeerIdentity) -> [Decision] {
        guard var batch = batches[batchID] else { return [] }
        batch.client = client
        for (index, entry) in batch.entries where entry.isAsked {
            askedBytes -= entry.metadata.size
            batch.set(index, to: .awaiting)
        }
        batches[batchID] = batch
        return grant()
    }

    /// The started item `item` needs its bytes: `.ready` at once when they are held, else when they come
    /// (a spooled item is read back now, if the window has room).
    mutating func want(_ item: Item) -> [Decision] {
        guard let entry = batches[item.batchID]?.entries[item.index] else { return [] }
        batches[item.batchID]?.entries[item.index]?.wanted = true
        if entry.state == .held { return [.ready(item)] }
        if entry.state == .spooled { batches[item.batchID]?.toLoad.append(item.index) }
        return grant()
    }

    /// The bytes of a held item, as its tilt-shift's injected input; `nil` when they are not held.
    func input(for item: Item) -> InjectedInput? {
        guard let entry = batches[item.batchID]?.entries[item.index], entry.state == .held else { return nil }
        return InjectedInput(
            fromTaskID: "\(item.batchID)/\(item.index)/upload", data: entry.bytes, crc32c: entry.crc32c)
    }

    /// An `UploadData` from `peer`: taken only from the connection it was asked of, for an item asked and
    /// not received; its size must be the announced one and its CRC-32C (`crc32c`, computed by the caller
    /// over `upload.data`) the one it carries. Returns `nil` when the message is dropped (not asked of
    /// `peer`, an unknown batch or item): the caller counts it.
    mutating func received(_ upload: UploadData, crc32c computed: UInt32, from peer: PeerIdentity) -> [Decision]? {
        let item = Item(batchID: upload.batchID, index: Int(upload.itemIndex))
        guard let entry = batches[item.batchID]?.entries[item.index], entry.state == .asked(peer) else { return nil }
        askedBytes -= entry.metadata.size
        if !upload.failure.isEmpty {
            drop(item)
            return [.fail(item, upload.failure)] + grant()
        }
        let size = UInt64(upload.data.count)
        if size != entry.metadata.size || computed != upload.crc32c {
            drop(item)
            let why =
                size != entry.metadata.size
                ? "\(size) bytes came, not the \(entry.metadata.size) announced"
                : "its bytes fail their CRC-32C"
            return [.fail(item, "\(entry.path) changed while it was sent (\(why)): submit it again")] + grant()
        }
        var decisions: [Decision] = []
        if spools {
            // Kept until written: if the spool cannot take them, they stay in memory instead.
            batches[item.batchID]?.set(item.index, to: .spooling)
            batches[item.batchID]?.entries[item.index]?.bytes = upload.data
            batches[item.batchID]?.entries[item.index]?.crc32c = upload.crc32c
            decisions.append(.spool(item, upload.data, crc32c: upload.crc32c))
        } else {
            batches[item.batchID]?.set(item.index, to: .held)
            batches[item.batchID]?.entries[item.index]?.bytes = upload.data
            batches[item.batchID]?.entries[item.index]?.crc32c = upload.crc32c
            heldBytes += size
            if entry.wanted { decisions.append(.ready(item)) }
        }
        return decisions + grant() + progress(of: item.batchID)
    }

    /// The spool holds the item's bytes: they leave memory; read back when the item wants them.
    mutating func spoolWritten(_ item: Item) -> [Decision] {
        guard batches[item.batchID]?.entries[item.index]?.state == .spooling else { return [] }
        batches[item.batchID]?.entries[item.index]?.bytes = []
        batches[item.batchID]?.set(item.index, to: .spooled)
        return grant() + progress(of: item.batchID)
    }

    /// The spool could not take the bytes (a full disk): they stay in memory, held as without a spool
    /// (counted against the window for held bytes), so that the item runs and the client is not asked again.
    mutating func spoolFailed(_ item: Item) -> [Decision] {
        guard let entry = batches[item.batchID]?.entries[item.index], entry.state == .spooling else { return [] }
        batches[item.batchID]?.set(item.index, to: .held)
        heldBytes += UInt64(entry.bytes.count)
        return entry.wanted ? [.ready(item)] : []
    }

    /// The bytes read back from the spool (their CRC-32C checked by the reader).
    mutating func loaded(_ item: Item, bytes: [UInt8], crc32c: UInt32) -> [Decision] {
        guard let entry = batches[item.batchID]?.entries[item.index], entry.state == .loading else { return [] }
        heldBytes -= entry.metadata.size
        heldBytes += UInt64(bytes.count)
        batches[item.batchID]?.set(item.index, to: .held)
        batches[item.batchID]?.entries[item.index]?.bytes = bytes
        batches[item.batchID]?.entries[item.index]?.crc32c = crc32c
        return entry.wanted ? [.ready(item)] : []
    }

    /// The spool file is gone or damaged: the item is awaiting again, asked of the client (never failed).
    mutating func loadFailed(_ item: Item) -> [Decision] {
        guard let entry = batches[item.batchID]?.entries[item.index], entry.state == .loading else { return [] }
        heldBytes -= entry.metadata.size
        batches[item.batchID]?.set(item.index, to: .awaiting)
        return grant()
    }

    /// The item finished (succeeded, failed, cancelled): its bytes leave memory and the spool, and the room
    /// goes to the next items.
    mutating func release(_ item: Item) -> [Decision] {
        guard let entry = batches[item.batchID]?.entries[item.index] else { return [] }
        var decisions: [Decision] = []
        if entry.isAsked { askedBytes -= entry.metadata.size }
        heldBytes -= entry.heldSize
        if spools && entry.state != .awaiting && !entry.isAsked { decisions.append(.unspool(item)) }
        drop(item)
        return decisions + grant()
    }

    /// Removes an item (its counts already taken off); a batch without items is forgotten.
    private mutating func drop(_ item: Item) {
        guard let entry = batches[item.batchID]?.entries.removeValue(forKey: item.index) else { return }
        if entry.isAwaiting { batches[item.batchID]?.awaitingCount -= 1 }
        if batches[item.batchID]?.entries.isEmpty == true { forgetBatch(item.batchID) }
    }

    /// The batch is gone (retired): everything it held leaves.
    mutating func forget(_ batchID: String) -> [Decision] {
        guard let batch = batches[batchID] else { return [] }
        var decisions: [Decision] = []
        for (index, entry) in batch.entries {
            if entry.isAsked { askedBytes -= entry.metadata.size }
            heldBytes -= entry.heldSize
            if spools && entry.state != .awaiting && !entry.isAsked {
                decisions.append(.unspool(Item(batchID: batchID, index: index)))
            }
        }
        forgetBatch(batchID)
        return decisions + grant()
    }

    private mutating func forgetBatch(_ batchID: String) {
        batches[batchID] = nil
        batchOrder.removeAll { $0 == batchID }
    }

    // MARK: Credit

    /// Asks for what fits in the window, earlier batches and items first, and reads back spooled items that
    /// are wanted, as far as the room for held bytes goes.
    private mutating func grant() -> [Decision] {
        var decisions: [Decision] = []
        for batchID in batchOrder {
            guard var batch = batches[batchID] else { continue }
            while let index = batch.toLoad.first {
                guard let entry = batch.entries[index], entry.state == .spooled else {
                    batch.toLoad.removeFirst()  // released, or read back already
                    continue
                }
                guard fits(entry.metadata.size, in: heldBytes) else { break }
                batch.toLoad.removeFirst()
                batch.set(index, to: .loading)
                heldBytes += entry.metadata.size
                decisions.append(.load(Item(batchID: batchID, index: index), size: entry.metadata.size))
            }
            if let client = batch.client {
                var wanted: [UploadWanted] = []
                var credit: UInt64 = 0
                while let index = batch.toAsk.last, wanted.count < MessageBounds.maxUploadsPerRequest {
                    guard let entry = batch.entries[index], entry.state == .awaiting else {
                        batch.toAsk.removeLast()  // released, or asked already
                        continue
                    }
                    guard fits(entry.metadata.size, in: spools ? askedBytes : askedBytes + heldBytes) else { break }
                    batch.toAsk.removeLast()
                    batch.set(index, to: .asked(client))
                    askedBytes += entry.metadata.size
                    credit += entry.metadata.size
                    wanted.append(UploadWanted(itemIndex: UInt32(index), path: entry.path, expected: entry.metadata))
                }
                if !wanted.isEmpty {
                    decisions.append(
                        .ask(
                            client,
                            UploadRequest(
                                batchID: batchID, items: wanted, creditBytes: credit,
                                awaitingItems: UInt32(clamping: batch.awaitingCount), spooled: spools)))
                }
            }
            batches[batchID] = batch
        }
        return decisions
    }

    /// Whether `size` more bytes fit beside `used`: within the window, or alone when nothing is used.
    private func fits(_ size: UInt64, in used: UInt64) -> Bool {
        used == 0 || used + size <= limitBytes
    }

    /// When the last byte of a batch is in, its client hears so (`awaiting_items: 0`): a detached
    /// `submit` may leave once they are spooled.
    private func progress(of batchID: String) -> [Decision] {
        guard let batch = batches[batchID], let client = batch.client, batch.awaitingCount == 0 else { return [] }
        return [
            .ask(
                client,
                UploadRequest(batchID: batchID, items: [], creditBytes: 0, awaitingItems: 0, spooled: spools))
        ]
    }
}
