import CImageCodecs
import XCTest

@testable import Imaging

/// `sw_ycc_correct_clipping`: the decoder's clamping of out-of-gamut R'G'B', carried into the planes.
final class ClipCorrectionTests: XCTestCase {
    /// One chroma row of 4:4:4 (no upsampling): returns (clipped pixels, luma out, Cb out, Cr out).
    private func correct(luma: [UInt8], cb: [UInt8], cr: [UInt8]) -> (Int, [UInt8], [UInt8], [UInt8]) {
        let n = luma.count
        var lumaOut = [UInt8](repeating: 0, count: n)
        var cbOut = [UInt8](repeating: 0, count: n)
        var crOut = [UInt8](repeating: 0, count: n)
        let clipped = luma.withUnsafeBufferPointer { y in
            cb.withUnsafeBufferPointer { b in
                cr.withUnsafeBufferPointer { r in
                    lumaOut.withUnsafeMutableBufferPointer { yo in
                        cbOut.withUnsafeMutableBufferPointer { bo in
                            crOut.withUnsafeMutableBufferPointer { ro in
                                let lumaRows: [UnsafePointer<UInt8>?] = [y.baseAddress, y.baseAddress]
                                let lumaOutRows: [UnsafeMutablePointer<UInt8>?] = [yo.baseAddress, yo.baseAddress]
                                let cbRows: [UnsafePointer<UInt8>?] = [b.baseAddress, b.baseAddress, b.baseAddress]
                                let crRows: [UnsafePointer<UInt8>?] = [r.baseAddress, r.baseAddress, r.baseAddress]
                                return sw_ycc_correct_clipping(
                                    lumaRows, lumaOutRows, 1, Int32(n), cbRows, crRows,
                                    bo.baseAddress, ro.baseAddress, Int32(n), 1, 1)
                            }
                        }
                    }
                }
            }
        }
        return (Int(clipped), lumaOut, cbOut, crOut)
    }

    func testInGamutPixelsAreLeftAlone() {
        let (clipped, _, cb, cr) = correct(
            luma: [16, 128, 235, 60], cb: [128, 100, 128, 150], cr: [128, 150, 128, 110])
        XCTAssertEqual(clipped, 0)
        XCTAssertEqual(cb, [128, 100, 128, 150])
        XCTAssertEqual(cr, [128, 150, 128, 110])
    }

    /// A bright, saturated red the decoder clamps (R' = 250 + 1.402·72 = 351): corrected to the Y'CbCr of the
    /// clamped (255, 199, 250), whatever the other pixels of the row.
    func testAClampedPixelBecomesTheYCbCrOfItsClampedRGB() {
        let (clipped, luma, cb, cr) = correct(
            luma: Array(repeating: 128, count: 40) + [250],
            cb: Array(repeating: 128, count: 40) + [128],
            cr: Array(repeating: 128, count: 40) + [200])
        XCTAssertEqual(clipped, 1)
        // R' = 250 + 101 = 351 → 255, G' = 250 − 51 = 199, B' = 250: clamped − unclamped = (−96, 0, 0).
        let (y, b, r) = (250 - 0.299 * 96, 128 + 0.168736 * 96, 200 - 0.5 * 96)
        XCTAssertEqual(Double(luma[40]), y, accuracy: 0.5)
        XCTAssertEqual(Double(cb[40]), b, accuracy: 0.5)
        XCTAssertEqual(Double(cr[40]), r, accuracy: 0.5)
        XCTAssertEqual(Array(cb[0..<40]), Array(repeating: 128, count: 40), "in-gamut samples unchanged")
    }
}
