/// How the tilt-shift's mask m (0 on the sharp band, rising to 1 over the transition) becomes blur.
public enum TiltShiftFalloff: String, Sendable, Equatable, CaseIterable {
    /// Core Image's recipe: one blur of σ, blended over the original by m (half-way through the transition
    /// a pixel is half sharp, half blurred at σ).
    case blend
    /// The blur itself grows with the distance from the sharp band, as a lens's depth of field does: a pixel
    /// is blurred at about m·σ. Made of `progressiveLevels` blurs at σ·k/levels (k = 1…levels), each pixel
    /// interpolated between the two levels around m·levels (level 0 is the original). Costs about
    /// `progressiveLevels` times the blur of `.blend`, and as many windows of rows.
    case progressive

    /// The blurs that make `.progressive`.
    public static let progressiveLevels = 4

    /// The number of blurred levels the filter computes for this falloff.
    var levels: Int { self == .progressive ? Self.progressiveLevels : 1 }
}
