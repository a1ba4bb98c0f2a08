/// How the tilt-shift's mask becomes blur (the proto's `Falloff`).
public enum WireFalloff: UInt32, Sendable, Equatable, CaseIterable {
    /// One blur blended over the original by the mask (Core Image's recipe).
    case blend = 0
    /// The blur grows with the mask, up to the blur radius.
    case progressive = 1
}
