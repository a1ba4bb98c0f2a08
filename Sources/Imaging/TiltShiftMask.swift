import CImageCodecs

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The tilt-shift's blend weights: 0 keeps the original, 1 takes the blurred image.
///
/// With the focus line horizontal (angle 0): m(y) = clamp((|y/h − focus| − band/2) / transition, 0, 1), one
/// weight per row; with transition 0, a hard step. At an angle (`FocusLine`) the same with the distance
/// measured across the turned line, one weight per pixel.
public enum TiltShiftMask {
    /// One weight per row, top to bottom, for a horizontal focus line (the angle is not used).
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

    /// m at image row `y` (fractional rows for subsampled planes), for a horizontal focus line.
    static func weight(at y: Double, height: Int, parameters: TiltShiftParameters) -> Float {
        let distance = abs(y / Double(height) - parameters.focusPosition) - parameters.sharpBand / 2
        if distance <= 0 { return 0 }
        if parameters.transition <= 0 { return 1 }
        return Float(min(1, distance / parameters.transition))
    }

    /// m at image pixel (x, y) at any angle, by the definition: the reference every path is held to (the filter's
    /// per-pixel weights, `sw_line_weights`, step along each row instead: equal within double rounding).
    public static func weight(x: Double, y: Double, width: Int, height: Int, parameters: TiltShiftParameters) -> Float {
        let line = FocusLine(width: width, height: height, angle: parameters.angle)
        let distance =
            abs((x * line.sine + (y * line.cosine + line.offset)) / line.extent - parameters.focusPosition)
            - parameters.sharpBand / 2
        if distance <= 0 { return 0 }
        if parameters.transition <= 0 { return 1 }
        return Float(min(1, distance / parameters.transition))
    }

    /// The mask of a whole image.
    static func mask(width: Int, height: Int, parameters: TiltShiftParameters) -> BlendMask {
        mask(
            planeWidth: width, planeHeight: height, xFactor: 1, yFactor: 1, imageWidth: width, imageHeight: height,
            parameters: parameters)
    }

    /// The mask of a plane subsampled by `xFactor` across and `yFactor` down (a JPEG's chroma): plane pixel
    /// (i, r) is weighted at its centre in image pixels, ((i + ½)·xFactor − ½, (r + ½)·yFactor − ½).
    static func mask(
        planeWidth: Int, planeHeight: Int, xFactor: Int, yFactor: Int, imageWidth: Int, imageHeight: Int,
        parameters: TiltShiftParameters
    ) -> BlendMask {
        let line = FocusLine(width: imageWidth, height: imageHeight, angle: parameters.angle)
        if line.isHorizontalUpright {
            // Today's recipe, to the bit: one weight per row.
            return .rows(
                weights(planeRows: planeHeight, factor: yFactor, imageHeight: imageHeight, parameters: parameters))
        }
        return .line(
            LineWeights(
                line: line, planeWidth: planeWidth, planeHeight: planeHeight,
                xScale: Double(xFactor), xOffset: Double(xFactor - 1) / 2, yScale: Double(yFactor),
                yOffset: Double(yFactor - 1) / 2,
                focus: parameters.focusPosition, halfBand: parameters.sharpBand / 2, transition: parameters.transition))
    }
}

/// The focus line of an image turned by an angle about its centre, as the coordinate across it: a pixel
/// (x, y) lies at t = (x·sine + y·cosine + offset) / extent, 0 at the image's first corner across the line and
/// 1 at the last (at 0° t = y/h, at 90° t = x/w, at 180° t = (h − y)/h). `extent` is the image's length
/// across the line, |sine|·w + |cosine|·h: the fractions of the recipe (focus, band, transition) are of it.
struct FocusLine: Sendable, Equatable {
    let sine: Double
    let cosine: Double
    let offset: Double
    let extent: Double
    /// Whether the angle is 0 (mod 360): today's horizontal line, weighted row by row.
    let isHorizontalUpright: Bool

    init(width: Int, height: Int, angle degrees: Double) {
        var reduced = degrees.truncatingRemainder(dividingBy: 360)
        if reduced < 0 { reduced += 360 }
        // Exact values at the quarter turns, so that 90° is the transposed 0° to the bit in the weights.
        switch reduced {
        case 0: (sine, cosine) = (0, 1)
        case 90: (sine, cosine) = (1, 0)
        case 180: (sine, cosine) = (0, -1)
        case 270: (sine, cosine) = (-1, 0)
        default:
            let radians = reduced * .pi / 180
            (sine, cosine) = (sin(radians), cos(radians))
        }
        let (w, h) = (Double(width), Double(height))
        extent = abs(sine) * w + abs(cosine) * h
        offset = extent / 2 - (w / 2 * sine + h / 2 * cosine)
        isHorizontalUpright = reduced == 0
    }
}

/// The blend weights over a plane: one per row (the focus line horizontal), or per pixel, computed a row at a
/// time as the filter needs them.
enum BlendMask: Sendable {
    case rows([Float])
    case line(LineWeights)

    /// The largest weight in row `y` (0: the row stays sharp).
    func rowMaximum(_ y: Int) -> Float {
        switch self {
        case .rows(let weights): weights[y]
        case .line(let line): line.rowMaximum(y)
        }
    }

    /// Whether every weight is 0 (the image passes unchanged).
    var isZero: Bool {
        switch self {
        case .rows(let weights): weights.allSatisfy { $0 == 0 }
        case .line(let line): line.rowMaximum(0) == 0 && line.rowMaximum(line.planeHeight - 1) == 0
        }
    }

    /// Whether every row has the same weights (a vertical focus line).
    var isRowInvariant: Bool {
        if case .line(let line) = self { return line.line.cosine == 0 }
        return false
    }

    /// Writes row `y`'s weights for samples [begin, end) of pixels of `channels` samples into `out`.
    func fill(row y: Int, into out: UnsafeMutablePointer<Float>, samples: Range<Int>, channels: Int) {
        switch self {
        case .rows(let weights):
            (out + samples.lowerBound).update(repeating: weights[y], count: samples.count)
        case .line(let line):
            line.fill(row: y, into: out, samples: samples, channels: channels)
        }
    }
}

/// Per-pixel weights for a turned focus line over a plane (possibly subsampled: plane pixel i is image
/// x = i·xScale + xOffset, plane row r image y = r·yScale + yOffset).
struct LineWeights: Sendable {
    let line: FocusLine
    let planeWidth: Int
    let planeHeight: Int
    let xScale: Double
    let xOffset: Double
    let yScale: Double
    let yOffset: Double
    let focus: Double
    let halfBand: Double
    let transition: Double

    func fill(row r: Int, into out: UnsafeMutablePointer<Float>, samples: Range<Int>, channels: Int) {
        let y = Double(r) * yScale + yOffset
        sw_line_weights(
            out, samples.lowerBound, samples.upperBound, Int32(channels), xScale, xOffset, line.sine,
            y * line.cosine + line.offset, line.extent, focus, halfBand, transition)
    }

    /// The largest weight in row `r`: at one of its ends (the distance from the line is linear along a row).
    func rowMaximum(_ r: Int) -> Float {
        var ends: (Float, Float) = (0, 0)
        withUnsafeMutableBytes(of: &ends) { raw in
            guard let floats = raw.baseAddress?.assumingMemoryBound(to: Float.self) else { return }
            fill(row: r, into: floats, samples: 0..<1, channels: 1)
            // Pixel planeWidth − 1 as the one sample of a one-sample row shifted by it.
            let y = Double(r) * yScale + yOffset
            let last = Double(planeWidth - 1) * xScale + xOffset
            sw_line_weights(
                floats + 1, 0, 1, 1, xScale, last, line.sine, y * line.cosine + line.offset, line.extent,
                focus, halfBand, transition)
        }
        return max(ends.0, ends.1)
    }
}
