/// Memory for one C message tree while it is being packed: C structs, NUL-terminated strings and small
/// arrays are bump-allocated in chunks and all freed together when the arena ends.
///
/// Owned by a ``CMessageBuilder``, which lives only inside ``CMessageBuilder/withEnvelope(of:_:)``: the
/// C tree never escapes the scope in which it is packed.
struct EncodingArena: ~Copyable {
    private static let chunkSize = 4096
    private static let maxAlignment = 16

    private var allocations: [UnsafeMutableRawPointer] = []
    private var cursor: UnsafeMutableRawPointer?
    private var remaining = 0

    init() {}

    deinit {
        for allocation in allocations {
            allocation.deallocate()
        }
    }

    /// Uninitialized memory for `byteCount` bytes aligned to `alignment` (at most 16).
    mutating func allocate(byteCount: Int, alignment: Int) -> UnsafeMutableRawPointer {
        let alignment = max(1, min(alignment, Self.maxAlignment))
        let size = max(byteCount, 1)
        if let cursor {
            let address = UInt(bitPattern: cursor)
            let padding = Int((UInt(alignment) - address % UInt(alignment)) % UInt(alignment))
            if padding + size <= remaining {
                let result = cursor + padding
                self.cursor = result + size
                remaining -= padding + size
                return result
            }
        }
        if size > Self.chunkSize / 4 {
            // Large requests get their own block, so that the current chunk keeps its free space.
            let block = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: Self.maxAlignment)
            allocations.append(block)
            return block
        }
        let chunk = UnsafeMutableRawPointer.allocate(byteCount: Self.chunkSize, alignment: Self.maxAlignment)
        allocations.append(chunk)
        cursor = chunk + size
        remaining = Self.chunkSize - size
        return chunk
    }

    /// Room for one `T` (a C struct), bound to `T` but not initialized: the caller runs the struct's
    /// generated `*__init` on it.
    mutating func make<T>(_ type: T.Type) -> UnsafeMutablePointer<T> {
        allocate(byteCount: MemoryLayout<T>.stride, alignment: MemoryLayout<T>.alignment)
            .bindMemory(to: T.self, capacity: 1)
    }

    /// Room for `count` values of `T`, bound but not initialized.
    mutating func array<T>(of type: T.Type, count: Int) -> UnsafeMutablePointer<T> {
        allocate(byteCount: MemoryLayout<T>.stride * count, alignment: MemoryLayout<T>.alignment)
            .bindMemory(to: T.self, capacity: count)
    }

    /// A NUL-terminated UTF-8 copy of `string`. C strings end at the first NUL, so a string that
    /// contains U+0000 is sent truncated there.
    mutating func cString(_ string: String) -> UnsafeMutablePointer<CChar> {
        var string = string
        return string.withUTF8 { utf8 in
            let storage = array(of: CChar.self, count: utf8.count + 1)
            if let source = utf8.baseAddress, utf8.count > 0 {
                UnsafeMutableRawPointer(storage).copyMemory(from: source, byteCount: utf8.count)
            }
            storage[utf8.count] = 0
            return storage
        }
    }

    /// A copy of `values` (used for small repeated scalars, and for payloads that could not be pinned).
    mutating func copy<T>(_ values: some Collection<T>) -> UnsafeMutablePointer<T>? {
        guard !values.isEmpty else { return nil }
        let storage = array(of: T.self, count: values.count)
        _ = UnsafeMutableBufferPointer(start: storage, count: values.count).initialize(from: values)
        return storage
    }
}
