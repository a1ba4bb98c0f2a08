import Foundation

/// The actor's part of uploads (docs/protocol.md, "Uploads"): the spool's files. The rules are
/// `UploadWindow`'s, carried out by `CoordinatorCore`; here bytes go to and come from the disk.
///
/// The spool is `DATA/uploads/BATCH/INDEX-CRC` (the CRC-32C in 8 hex digits): a file is written under a
/// hidden temporary name, synced and renamed, so that a name in the spool always holds a whole upload,
/// and its CRC is checked when it is read back. Like the journal's writes, this runs on the actor.
extension Coordinator {
    /// Carries out one of the core's upload effects; what it found goes back to the core as an event.
    func carryOut(_ io: UploadIO, now: ContinuousClock.Instant) {
        switch io {
        case .dropped:
            droppedMessages += 1
        case .spool(let item, let bytes, let crc):
            let written = writeSpool(item, bytes: bytes, crc32c: crc)
            apply(.uploadSpooled(item, written: written), now: now)
        case .load(let item, let size):
            let loaded = readSpool(item, size: size)
            apply(.uploadLoaded(item, bytes: loaded?.bytes, crc32c: loaded?.crc32c ?? 0), now: now)
        case .unspool(let item):
            for file in spoolFiles(of: item) { try? FileManager.default.removeItem(at: file) }
            if let folder = spoolFolder(of: item.batchID),
                (try? FileManager.default.contentsOfDirectory(atPath: folder.path))?.isEmpty == true
            {
                try? FileManager.default.removeItem(at: folder)
            }
        }
    }

    /// `DATA/uploads/BATCH`; `nil` without a data directory or for a batch ID that is not a plain name.
    private func spoolFolder(of batchID: String) -> URL? {
        guard let data = configuration.dataDirectory, !batchID.isEmpty, !batchID.hasPrefix("."),
            !batchID.contains("/"), !batchID.contains("\0")
        else { return nil }
        return data.appendingPathComponent("uploads", isDirectory: true).appendingPathComponent(
            batchID, isDirectory: true)
    }

    /// The item's spool files (normally one: `INDEX-CRC`).
    private func spoolFiles(of item: UploadWindow.Item) -> [URL] {
        guard let folder = spoolFolder(of: item.batchID),
            let names = try? FileManager.default.contentsOfDirectory(atPath: folder.path)
        else { return [] }
        return names.filter { $0.hasPrefix("\(item.index)-") }.map { folder.appendingPathComponent($0) }
    }

    private func writeSpool(_ item: UploadWindow.Item, bytes: [UInt8], crc32c: UInt32) -> Bool {
        guard let folder = spoolFolder(of: item.batchID) else { return false }
        let name = "\(item.index)-" + String(format: "%08x", crc32c)
        let temporary = folder.appendingPathComponent(".\(name).partial")
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try Data(bytes).write(to: temporary)
            let handle = try FileHandle(forWritingTo: temporary)
            try handle.synchronize()
            try handle.close()
            for stale in spoolFiles(of: item) { try? FileManager.default.removeItem(at: stale) }
            try FileManager.default.moveItem(at: temporary, to: folder.appendingPathComponent(name))
            DirectorySync.sync(folder)
            return true
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            logger.error(
                "could not spool an upload", metadata: ["batch": "\(item.batchID)", "error": "\(error)"])
            return false
        }
    }

    /// The bytes of the item's spool file when it is whole: `size` bytes whose CRC-32C is in its name.
    private func readSpool(_ item: UploadWindow.Item, size: UInt64) -> (bytes: [UInt8], crc32c: UInt32)? {
        for file in spoolFiles(of: item) {
            let suffix = file.lastPathComponent.dropFirst("\(item.index)-".count)
            guard let crc = UInt32(suffix, radix: 16), let data = try? Data(contentsOf: file),
                UInt64(data.count) == size
            else { continue }
            let bytes = [UInt8](data)
            if CRC32C.checksum(bytes) == crc { return (bytes, crc) }
        }
        return nil
    }
}
