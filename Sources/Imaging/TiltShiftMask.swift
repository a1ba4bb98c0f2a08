/// The per-row blend weights of the tilt-shift: 0 keeps the original, 1 takes the blurred image.
///
/// m(y) = clamp((|y/h − focus| − band/2) / transition, 0, 1); with transition 0, a hard step.
public enum TiltShiftMask {
    /// One weight per row, top to bottom.
    public static func weights(height: Int, parameters: TiltShiftParameters) -> [Float] {
        let h = Double(height)
        return (0..<height).map { y in
            let distance = abs(Double(y) / h - parameters.focusPosition) - parameters.sharpBand / 2
            if distance <= 0 { return 0 }
            if parameters.transition <= 0 { return 1 }
            return Float(min(1, distance / parameters.transition))
        }
    }
}
