import Foundation
import Imaging
import Runtime

/// Small JPEG previews of finished outputs for the dashboard, made from the files the coordinator keeps
/// (`--data-dir`) on a thread of their own (read, decode, scale down, encode: never on the cooperative
/// pool), and kept in a small cache so that a page refreshed every second does not make them again.
final class DashboardPreviews: Sendable {
    /// The longest side of a preview, in pixels (shown at half that on high-density screens).
    static let maxSide = 160
    /// How many previews are kept (about 5–10 KB each).
    static let cacheCapacity = 256
    private let threads = ComputeThreads(name: "previews", count: 1)
    private let cache = LockedValue(PreviewCache())

    /// The preview of the image in `file`, cached under `key`.
    ///
    /// - Throws: when the file cannot be read or is not an image this build decodes.
    func preview(of file: URL, key: String) async throws -> [UInt8] {
        if let cached = cache.withLock({ $0.entries[key] }) { return cached }
        let jpeg = try await threads.run { cancellation in
            let data = [UInt8](try Data(contentsOf: file))
            let (image, _) = try ImageCodec.decode(data, cancellation: cancellation)
            let small = image.downscaled(toFit: Self.maxSide)
            return try ImageCodec.encode(
                small.channels == 4 ? small.converted(toChannels: 3) : small, as: .jpeg,
                jpegQuality: 80, cancellation: cancellation)
        }
        cache.withLock { $0.insert(jpeg, for: key, capacity: Self.cacheCapacity) }
        return jpeg
    }

    /// Ends the preview thread (work not started yet fails).
    func shutdown() { threads.shutdown() }
}

/// The cached previews, the oldest dropped first.
private struct PreviewCache {
    var entries: [String: [UInt8]] = [:]
    var order: [String] = []

    mutating func insert(_ preview: [UInt8], for key: String, capacity: Int) {
        if entries.updateValue(preview, forKey: key) == nil { order.append(key) }
        while order.count > capacity {
            entries[order.removeFirst()] = nil
        }
    }
}
