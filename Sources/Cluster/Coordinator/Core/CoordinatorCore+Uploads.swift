import Wire

/// Uploaded files (docs/protocol.md, "Uploads"): the core carries out `UploadWindow`'s decisions on its
/// items, the dispatcher and the effects; the actor only moves bytes (`CoreEffect.upload`).
extension CoordinatorCore {
    /// Registers a batch's unfinished upload items with the window; `client` is asked for them (`nil`
    /// after a restart: whoever attaches first). With a spool, every such item of a restored batch is
    /// taken as spooled: a file that is not there makes it awaiting again (`CoreEvent.uploadLoaded`).
    mutating func registerUploads(of batchID: String, client: PeerIdentity?, restored: Bool) {
        guard let run = runs[batchID], !run.uploads.isEmpty, let registered = registry.batches[batchID] else { return }
        var items: [(index: Int, metadata: UploadMetadata, path: String)] = []
        for (index, metadata) in run.uploads where index < registered.items.count {
            guard registered.items[index].state == .unfinished else { continue }
            items.append((index: index, metadata: metadata, path: registered.items[index].source))
        }
        let spooled = restored && uploads.spools ? Set(items.map(\.index)) : []
        carryOut(uploads.add(batchID: batchID, items: items, client: client, spooled: spooled))
    }

    /// A started upload item wants its bytes (at once if held).
    mutating func wantUpload(_ index: Int, of batchID: String) {
        carryOut(uploads.want(UploadWindow.Item(batchID: batchID, index: index)))
    }

    /// A client's `UploadData`: taken if it was asked of `peer`, else dropped and counted.
    mutating func receiveUpload(_ upload: UploadData, from peer: PeerIdentity) {
        let crc = upload.failure.isEmpty ? CRC32C.checksum(upload.data) : 0
        guard let decisions = uploads.received(upload, crc32c: crc, from: peer) else {
            append(.upload(.dropped))
            log(
                .debug, "upload dropped: not asked of this client",
                ["batch": upload.batchID, "item": "\(upload.itemIndex)", "client": "\(peer)"])
            return
        }
        carryOut(decisions)
    }

    /// A client attached to a batch (`FetchResults`, `submit --key`): what awaits upload is asked of it.
    mutating func attachUploads(_ batchID: String, client: PeerIdentity) {
        carryOut(uploads.attach(batchID, client: client))
    }

    /// The actor wrote (or failed to write) an item's bytes to the spool.
    mutating func uploadSpooled(_ item: UploadWindow.Item, written: Bool) {
        if !written {
            log(
                .warning, "upload could not be spooled; it is asked again",
                ["batch": item.batchID, "item": "\(item.index)"])
        }
        carryOut(written ? uploads.spoolWritten(item) : uploads.spoolFailed(item))
    }

    /// The actor read an item's bytes back from the spool (`nil`: the file is gone or damaged).
    mutating func uploadLoaded(_ item: UploadWindow.Item, bytes: [UInt8]?, crc32c: UInt32) {
        guard let bytes else {
            log(.info, "spooled upload missing; it is asked again", ["batch": item.batchID, "item": "\(item.index)"])
            return carryOut(uploads.loadFailed(item))
        }
        carryOut(uploads.loaded(item, bytes: bytes, crc32c: crc32c))
    }

    /// An item ended: its bytes leave.
    mutating func releaseUpload(_ index: Int, of batchID: String) {
        carryOut(uploads.release(UploadWindow.Item(batchID: batchID, index: index)))
    }

    /// A batch left (finished or retired): whatever the window still held for it leaves.
    mutating func forgetUploads(of batchID: String) {
        carryOut(uploads.forget(batchID))
    }

    private mutating func carryOut(_ decisions: [UploadWindow.Decision]) {
        for decision in decisions {
            switch decision {
            case .ask(let peer, let request):
                send([Outbound(peer: peer, message: .uploadRequest(request))])
            case .spool(let item, let bytes, let crc):
                append(.upload(.spool(item, bytes, crc32c: crc)))
            case .load(let item, let size):
                append(.upload(.load(item, size: size)))
            case .unspool(let item):
                append(.upload(.unspool(item)))
            case .ready(let item):
                guard var run = runs[item.batchID]?.items[item.index], let input = uploads.input(for: item),
                    let request = run.uploaded(input)
                else { continue }
                runs[item.batchID]?.items[item.index] = run
                enqueue(request, of: run, in: item.batchID)
            case .fail(let item, let message):
                finishItem(
                    item.index, of: item.batchID, outcome: .failure(TaskFailure(code: .upload, message: message)))
            }
        }
    }
}

/// What the actor does for uploads (`CoreEffect.upload`): file I/O on the spool, and counting.
enum UploadIO: Equatable {
    /// Write the bytes to `DATA/uploads/BATCH/INDEX-CRC`; answer with `CoreEvent.uploadSpooled`.
    case spool(UploadWindow.Item, [UInt8], crc32c: UInt32)
    /// Read them back (their CRC-32C checked); answer with `CoreEvent.uploadLoaded`.
    case load(UploadWindow.Item, size: UInt64)
    /// Delete the item's spool file.
    case unspool(UploadWindow.Item)
    /// An `UploadData` not asked of its sender was dropped: count it.
    case dropped
}
