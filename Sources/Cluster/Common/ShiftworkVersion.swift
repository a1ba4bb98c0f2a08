/// Shiftwork's software version, reported by workers in their hello and shown by `shiftwork status`.
public enum ShiftworkVersion {
    /// The version string of this build.
    public static let current = "0.1.0"
}
