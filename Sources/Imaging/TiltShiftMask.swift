/// The per-row blend weights of the tilt-shift: 0 keeps the original, 1 takes the blurred image.
///
/// m(y) = clamp((|y/h − focus| − band/2) / transition, 0, 1); with transition 0, a hard step.
public enum TiltShiftMask {
    /// One weight per row, top to bottom.
    public static func weights(height: Int, parameters: TiltShiftParameters) -> [Float] {
        (0..<height).map { weight(at: Double($0), height: height, parameters: parameters) }
    }

    /// One weight per row of a plane subsampled vertically by `factor` (2 for the chroma of a 4:2:0 JPEG):
    /// plane row r is weighted at its centre in image rows, (r + ½)·factor − ½.
    static func weights(planeRows: Int, factor: Int, imageHeight: Int, parameters: TiltShiftParameters) -> [Float] {
        if factor == 1 { return weights(height: planeRows, parameters: parameters) }
        return (0..<planeRows).map { r in
            weight(at: (Double(r) + 0.5) * Double(factor) - 0.5, height: imageHeight, parameters: parameters)
        }
    }

    /// m at image row `y` (fractional rows for subsampled planes).
    static func weight(at y: Double, height: Int, parameters: TiltShiftParameters) -> Float {
        let distance = abs(y / Double(height) - parameters.focusPosition) - parameters.sharpBand / 2
        if distance <= 0 { return 0 }
        if parameters.transition <= 0 { return 1 }
        return Float(min(1, distance / parameters.transition))
    }
}
