import Foundation
import Wire

/// An append-only file of records, each framed as `[length: UInt32 LE][CRC-32: UInt32 LE][bytes]` (`JournalFraming`).
///
/// Reading stops at the first frame that is incomplete or fails its checksum (a write torn by a crash)
/// and cuts the file there, so that later appends follow the last intact record. Appends are single
/// `write(2)` calls: a record that returned survives the process being killed; `sync` also survives
/// the machine losing power.
final class JournalFile {
    /// Why the journal cannot be used.
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    let url: URL
    private var descriptor: Int32
    /// Records larger than this are refused on append and read as damage on replay.
    static let maxRecordSize = 512 << 20

    /// Opens (creating if missing) the file at `url` and returns it with the intact records it holds.
    static func open(_ url: URL) throws -> (JournalFile, records: [[UInt8]], discardedBytes: Int) {
        let descriptor = Glibc.open(url.path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw Failure(description: "cannot open the journal \(url.path): \(String(cString: strerror(errno)))")
        }
        let file = JournalFile(url: url, descriptor: descriptor)
        let contents: Data
        do {
            contents = try Data(contentsOf: url)
        } catch {
            throw Failure(description: "cannot read the journal \(url.path): \(error.localizedDescription)")
        }
        let (records, intactLength) = Self.records(in: contents)
        if intactLength < contents.count {
            guard ftruncate(descriptor, off_t(intactLength)) == 0 else {
                throw Failure(
                    description:
                        "cannot cut the damaged end off the journal \(url.path): \(String(cString: strerror(errno)))")
            }
        }
        lseek(descriptor, 0, SEEK_END)
        return (file, records, contents.count - intactLength)
    }

    /// The intact records at the start of `contents`, and how many bytes they span (`JournalFraming`).
    static func records(in contents: Data) -> ([[UInt8]], Int) {
        contents.withUnsafeBytes { JournalFraming.records(in: $0, maxRecordSize: maxRecordSize) }
    }

    private init(url: URL, descriptor: Int32) {
        self.url = url
        self.descriptor = descriptor
    }

    deinit {
        try? flush()
        Glibc.close(descriptor)
    }

    /// Framed records appended with `appendBuffered`, not written yet.
    private var buffer: [UInt8] = []

    /// Appends one record (after any buffered ones); with `sync`, returns only once it is on stable storage.
    func append(_ record: [UInt8], sync: Bool) throws {
        try append(framed: Self.frame(record), sync: sync)
    }

    /// Appends framed records (`frame(_:)`, or frames checked as a pair's stream checks them) after any
    /// buffered ones, with one `write(2)`; with `sync`, returns only once they are on stable storage.
    func append(framed: [UInt8], sync: Bool) throws {
        appendBuffered(framed: framed)
        try flush()
        if sync { try self.sync() }
    }

    /// Has what was written reach stable storage (`fdatasync`).
    func sync() throws {
        if fdatasync(descriptor) != 0 {
            throw Failure(description: "cannot sync the journal \(url.path): \(String(cString: strerror(errno)))")
        }
    }

    /// Adds one record to the buffer, written by the next `flush()` or `append(_:sync:)`.
    func appendBuffered(_ record: [UInt8]) throws {
        appendBuffered(framed: try Self.frame(record))
    }

    /// Adds framed records to the buffer, written by the next `flush()`.
    func appendBuffered(framed: [UInt8]) {
        if buffer.isEmpty {
            buffer = framed
        } else {
            buffer += framed
        }
    }

    /// Writes the buffered records with one `write(2)`.
    func flush() throws {
        guard !buffer.isEmpty else { return }
        defer { buffer = [] }
        try write(buffer, to: descriptor)
    }

    /// Replaces the file's contents with `records`, atomically (a crash leaves the old or the new file).
    func rewrite(_ records: [[UInt8]]) throws {
        let temporary = url.appendingPathExtension("compacting")
        let fresh = Glibc.open(temporary.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fresh >= 0 else {
            throw Failure(description: "cannot write \(temporary.path): \(String(cString: strerror(errno)))")
        }
        var contents: [UInt8] = []
        for record in records { contents += try Self.frame(record) }
        do {
            try write(contents, to: fresh)
            guard fsync(fresh) == 0 else {
                throw Failure(description: "cannot sync \(temporary.path): \(String(cString: strerror(errno)))")
            }
        } catch {
            Glibc.close(fresh)
            throw error
        }
        guard rename(temporary.path, url.path) == 0 else {
            Glibc.close(fresh)
            throw Failure(description: "cannot replace the journal \(url.path): \(String(cString: strerror(errno)))")
        }
        Self.syncDirectory(of: url)
        Glibc.close(descriptor)
        descriptor = fresh
        lseek(descriptor, 0, SEEK_END)
    }

    /// The frame of one record (`JournalFraming`).
    ///
    /// - Throws: `Failure` for a record over `maxRecordSize`.
    static func frame(_ record: [UInt8]) throws -> [UInt8] {
        guard record.count <= Self.maxRecordSize else {
            throw Failure(
                description: "a journal record of \(record.count) bytes is over the limit of \(Self.maxRecordSize)")
        }
        return JournalFraming.frame(record)
    }

    private func write(_ bytes: [UInt8], to descriptor: Int32) throws {
        try bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(descriptor, buffer.baseAddress.map { $0 + offset }, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    throw Failure(
                        description: "cannot write the journal \(url.path): \(String(cString: strerror(errno)))")
                }
                offset += written
            }
        }
    }

    /// Makes a rename in `url`'s directory durable.
    static func syncDirectory(of url: URL) {
        let directory = Glibc.open(url.deletingLastPathComponent().path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard directory >= 0 else { return }
        _ = fsync(directory)
        Glibc.close(directory)
    }
}
