import CShiftworkProto

// Copying fields out of unpacked protobuf-c structs. Everything is copied into Swift values before
// the caller frees the unpacked tree; no pointer read here is kept.

/// A Swift copy of a C string field (`nil` reads as empty). A string that is not valid UTF-8 makes the
/// message malformed (protobuf's `string` is UTF-8 by definition): repairing it would let a peer smuggle
/// bytes that show differently in logs, terminals and file names than they compare.
func readString(_ pointer: UnsafePointer<CChar>?) throws(WireError) -> String {
    guard let pointer else { return "" }
    guard let string = String(validatingCString: pointer) else {
        throw .malformed("a string field is not valid UTF-8")
    }
    return string
}

/// A Swift copy of a `bytes` field: the one copy made on decoding.
func readBytes(_ data: ProtobufCBinaryData) -> [UInt8] {
    guard data.len > 0, let base = data.data else { return [] }
    return [UInt8](UnsafeBufferPointer(start: base, count: data.len))
}

/// The elements of a repeated message field, converted one by one; a null element is malformed.
func readRepeated<C, T>(
    _ count: Int,
    _ elements: UnsafeMutablePointer<UnsafeMutablePointer<C>?>?,
    field: String,
    _ convert: (UnsafeMutablePointer<C>) throws(WireError) -> T
) throws(WireError) -> [T] {
    guard count > 0 else { return [] }
    guard let elements else { throw .malformed("\(field): \(count) elements but no storage") }
    var result: [T] = []
    result.reserveCapacity(count)
    for index in 0..<count {
        guard let element = elements[index] else { throw .malformed("\(field)[\(index)] is null") }
        result.append(try convert(element))
    }
    return result
}

/// The elements of a repeated `string` field (each as `readString` reads it); a null element is malformed.
func readStrings(
    _ count: Int, _ elements: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?, field: String
) throws(WireError) -> [String] {
    try readRepeated(count, elements, field: field) { (element) throws(WireError) in try readString(element) }
}

/// The pointer of a set message field, or a `malformed` error naming it (the name is made only then: a
/// coordinator decodes thousands of results a second).
func required<C>(
    _ pointer: UnsafeMutablePointer<C>?, _ field: @autoclosure () -> String
) throws(WireError) -> UnsafeMutablePointer<C> {
    guard let pointer else { throw .malformed("\(field()) is set but null") }
    return pointer
}

/// The elements of a repeated `uint32` field (empty when unset).
func readUInt32s(_ count: Int, _ elements: UnsafeMutablePointer<UInt32>?) -> [UInt32] {
    guard count > 0, let elements else { return [] }
    return [UInt32](UnsafeBufferPointer(start: elements, count: count))
}

/// The elements of a repeated scalar field (`uint32`, `uint64`, `float`…; empty when unset).
func readScalars<T>(_ count: Int, _ elements: UnsafeMutablePointer<T>?) -> [T] {
    guard count > 0, let elements else { return [] }
    return [T](UnsafeBufferPointer(start: elements, count: count))
}
