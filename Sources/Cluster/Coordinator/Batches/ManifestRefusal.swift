/// Why a manifest item did not expand its batch: the item fails with this message.
struct ManifestRefusal: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
