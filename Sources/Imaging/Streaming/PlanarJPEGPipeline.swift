import CImageCodecs

/// JPEG → JPEG in the JPEG's own planes: the decoder hands out the raw Y'CbCr planes (one full-resolution
/// luma plane and, for 4:2:0, two quarter-size chroma planes: no upsampling, no colour conversion), each
/// plane is blurred at its own scale (σ for luma; σ·h/hmax across and σ·v/vmax down for chroma) and
/// blended through the same mask (weighted at the centre of each plane row), and the planes are encoded
/// back with the same sampling.
///
/// The recipe is linear and so is the JPEG's colour conversion (Y'CbCr ↔ R'G'B' is affine, the weights sum
/// to one), so this is the recipe applied to the image: `PlanarJPEGTests` holds it to the exact RGB recipe.
/// It filters 1.5 samples per pixel for 4:2:0 instead of 3, and skips the upsampling and both colour
/// conversions. Each plane streams through a `StripBlender` of its own; finished rows wait in a small queue
/// per plane until every plane has a whole group (an iMCU row) for the encoder.
final class PlanarJPEGPipeline {
    private let decoder: JPEGRowDecoder
    private let planes: [Plane]
    private let token: CancellationToken

    /// One plane's buffers and state.
    private final class Plane {
        let width: Int
        let height: Int
        let paddedWidth: Int
        let groupRows: Int
        let blender: StripBlender
        /// One group of decoded rows (`groupRows` × `paddedWidth`), then one group to encode.
        let decoded: UnsafeMutablePointer<UInt8>
        let encoding: UnsafeMutablePointer<UInt8>
        /// Finished rows waiting for the encoder (`width` bytes each), from `queueStart`.
        var queue: [UInt8] = []
        var queueStart = 0
        var queuedRows: Int { (queue.count - queueStart) / width }
        var encodedRows = 0

        init(width: Int, height: Int, paddedWidth: Int, groupRows: Int, blender: StripBlender) {
            self.width = width
            self.height = height
            self.paddedWidth = paddedWidth
            self.groupRows = groupRows
            self.blender = blender
            self.decoded = .allocate(capacity: paddedWidth * groupRows)
            self.encoding = .allocate(capacity: paddedWidth * groupRows)
        }

        deinit {
            decoded.deallocate()
            encoding.deallocate()
        }
    }

    /// Prepares the planes of `decoder` (after `startPlanes` said yes) for `parameters`.
    init(decoder: JPEGRowDecoder, layout: sw_jpeg_planes, parameters: TiltShiftParameters, threads: Int,
         kernels: KernelVariant, token: CancellationToken) {
        self.decoder = decoder
        self.token = token
        let widths = [layout.width.0, layout.width.1, layout.width.2]
        let heights = [layout.height.0, layout.height.1, layout.height.2]
        let padded = [layout.padded_width.0, layout.padded_width.1, layout.padded_width.2]
        let groups = [layout.group_rows.0, layout.group_rows.1, layout.group_rows.2]
        let h = [layout.h.0, layout.h.1, layout.h.2], v = [layout.v.0, layout.v.1, layout.v.2]
        self.planes = (0..<3).map { i in
            let (xFactor, yFactor) = (Int(layout.max_h / h[i]), Int(layout.max_v / v[i]))
            let sigma = parameters.blurRadius
            let weights = TiltShiftMask.weights(planeRows: Int(heights[i]), factor: yFactor, imageHeight: decoder.height,
                                                parameters: parameters)
            let blender = StripBlender(
                width: Int(widths[i]), height: Int(heights[i]), channels: 1,
                sigma: sigma == 0 ? 0 : sigma / Double(xFactor), verticalSigma: sigma == 0 ? 0 : sigma / Double(yFactor),
                weights: weights, threads: threads, kernels: kernels, token: token)
            return Plane(width: Int(widths[i]), height: Int(heights[i]), paddedWidth: Int(padded[i]),
                         groupRows: Int(groups[i]), blender: blender)
        }
    }

    /// Decodes, filters and encodes every group into `encoder` (made with `JPEGRowEncoder(planes:)`).
    func run(into encoder: JPEGRowEncoder, decode decodeTime: inout Duration, decodeCPU: inout Duration,
             encode encodeTime: inout Duration, encodeCPU: inout Duration) throws {
        let strides = planes.map(\.paddedWidth)
        let groupCount = (planes[0].height + planes[0].groupRows - 1) / planes[0].groupRows
        var decodedGroups = 0
        var encodedGroups = 0
        while encodedGroups < groupCount {
            if decodedGroups < groupCount {
                let start = StageClock.now
                try decoder.readPlanes(into: planes.map(\.decoded), strides: strides, token: token)
                let (wall, cpu) = start.elapsed
                decodeTime += wall
                decodeCPU += cpu
                for plane in planes { try feed(plane, group: decodedGroups) }
                decodedGroups += 1
            }
            // Encode every group that all the planes have finished.
            while encodedGroups < groupCount, planes.allSatisfy({ $0.queuedRows >= min($0.groupRows, $0.height - $0.encodedRows) }) {
                for plane in planes { fillEncodingGroup(plane) }
                let start = StageClock.now
                try encoder.writePlanes(planes.map(\.encoding), strides: strides, token: token)
                let (wall, cpu) = start.elapsed
                encodeTime += wall
                encodeCPU += cpu
                encodedGroups += 1
            }
        }
    }

    /// Pushes the valid rows of decoded group `group` through the plane's blender; finished rows join its queue.
    private func feed(_ plane: Plane, group: Int) throws {
        let first = group * plane.groupRows
        let rows = max(0, min(plane.groupRows, plane.height - first))
        var done = 0
        while done < rows {
            let (space, available) = plane.blender.inputSpace()
            let count = min(available, rows - done)
            for r in 0..<count {
                (space + r * plane.width).update(from: plane.decoded + (done + r) * plane.paddedWidth, count: plane.width)
            }
            try plane.blender.commit(rows: count) { finished, finishedRows, _ in
                plane.queue.append(contentsOf: UnsafeBufferPointer(start: finished, count: finishedRows * plane.width))
            }
            done += count
        }
    }

    /// Moves the next group of finished rows into the plane's encoding buffer, repeating the last column and
    /// the last row into the padding (what the encoder would do itself: it keeps the edge blocks smooth).
    private func fillEncodingGroup(_ plane: Plane) {
        let rows = min(plane.groupRows, plane.height - plane.encodedRows)
        plane.queue.withUnsafeBufferPointer { queue in
            guard let base = queue.baseAddress else { return }
            for r in 0..<plane.groupRows {
                let source = base + plane.queueStart + min(r, rows - 1) * plane.width
                let row = plane.encoding + r * plane.paddedWidth
                row.update(from: source, count: plane.width)
                if plane.paddedWidth > plane.width {
                    (row + plane.width).update(repeating: source[plane.width - 1], count: plane.paddedWidth - plane.width)
                }
            }
        }
        plane.queueStart += rows * plane.width
        plane.encodedRows += rows
        if plane.queueStart > plane.queue.count / 2 {
            plane.queue.removeFirst(plane.queueStart)
            plane.queueStart = 0
        }
    }
}
