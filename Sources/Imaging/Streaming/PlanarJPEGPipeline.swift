import CImageCodecs

/// JPEG → JPEG in the JPEG's own planes: the decoder hands out the raw Y'CbCr planes (one full-resolution
/// luma plane and, for 4:2:0, two quarter-size chroma planes: no upsampling, no colour conversion), each
/// plane is blurred at its own scale (σ for luma; σ·h/hmax across and σ·v/vmax down for chroma) and
/// blended through the same mask (weighted at the centre of each plane row, or of each plane pixel when the
/// focus line is turned), and the planes are encoded
/// back with the same sampling.
///
/// The recipe is linear and so is the JPEG's colour conversion (Y'CbCr ↔ R'G'B' is affine, the weights sum
/// to one), so this is the recipe applied to the image: `PlanarJPEGTests` holds it to the exact RGB recipe.
/// It filters 1.5 samples per pixel for 4:2:0 instead of 3, and skips the upsampling and both colour
/// conversions. Each plane streams through a `StripBlender` of its own; finished rows wait in a small queue
/// per plane until every plane has a whole group (an iMCU row) for the encoder.
///
/// One thing is not linear: the decoder clamps each pixel's R'G'B' to 0...255, and where 4:2:0 chroma meets
/// sharp luma or colours are saturated, the unclamped values leave the gamut; the RGB recipe blurs the clamped
/// image. So, when the image is filtered at all, each group is first corrected by `sw_ycc_correct_clipping`
/// (the Y'CbCr of clamped − unclamped added to the planes; cheap where nothing clips), and the rows it changed
/// are blurred from their corrected values and blended with their own (`StripBlender.setBlurInput`). That needs
/// the chroma row below a group's last one (the upsampling's neighbour), so the planes are fed one group behind
/// the decoder.
final class PlanarJPEGPipeline {
    private let decoder: JPEGRowDecoder
    private let planes: [Plane]
    private let token: CancellationToken
    /// Whether the planes are corrected for the decoder's clipping (not when the image passes unchanged).
    let correctsClipping: Bool
    /// The luma's sampling relative to the chroma (1 or 2 each way).
    private let xFactor: Int
    private let yFactor: Int
    /// Pixels whose R'G'B' the decoder would clamp, found so far (the correction's work).
    private(set) var clippedPixels = 0
    /// Times a plane's queue outgrew its reservation (and was copied to a larger buffer): 0 when the reservation
    /// holds, as `PlanarJPEGTests` checks.
    private(set) var queueGrowths = 0

    /// One plane's buffers and state.
    private final class Plane {
        let width: Int
        let height: Int
        let paddedWidth: Int
        let groupRows: Int
        let blender: any StreamingBlender
        /// Two groups of decoded rows (`groupRows` × `paddedWidth` each: the group being corrected and the one
        /// below it), one group to encode, the corrected rows of a group (valid where `isCorrected`), and the
        /// last decoded row of the group above the one being corrected.
        let decoded: [UnsafeMutablePointer<UInt8>]
        let encoding: UnsafeMutablePointer<UInt8>
        let corrected: UnsafeMutablePointer<UInt8>
        var isCorrected: [Bool]
        let rowAbove: UnsafeMutablePointer<UInt8>
        /// Finished rows waiting for the encoder (`width` bytes each), from `queueStart`. Its capacity is reserved
        /// up front (`queueReservation`): grown by doubling instead, it was allocated, copied and faulted in anew
        /// for every image (a fifth of a worker's page faults per photo).
        var queue: [UInt8] = []
        var queueStart = 0
        var queuedRows: Int { (queue.count - queueStart) / width }
        var encodedRows = 0

        init(width: Int, height: Int, paddedWidth: Int, groupRows: Int, blender: any StreamingBlender) {
            self.width = width
            self.height = height
            self.paddedWidth = paddedWidth
            self.groupRows = groupRows
            self.blender = blender
            self.decoded = (0..<2).map { _ in .allocate(capacity: paddedWidth * groupRows) }
            self.encoding = .allocate(capacity: paddedWidth * groupRows)
            self.corrected = .allocate(capacity: paddedWidth * groupRows)
            self.isCorrected = [Bool](repeating: false, count: groupRows)
            self.rowAbove = .allocate(capacity: paddedWidth)
            queue.reserveCapacity(
                Self.queueReservation(
                    width: width, height: height, groupRows: groupRows,
                    windowRows: blender.capacity))
        }

        /// Bytes reserved for the queue: the blender emits at most its window at once, the encoder takes a group
        /// at a time, and consumed rows stay at the queue's front until they are half of it (`fillEncodingGroup`);
        /// so twice the window and a group, and never more than the plane.
        static func queueReservation(width: Int, height: Int, groupRows: Int, windowRows: Int) -> Int {
            width * min(height + groupRows, 2 * (windowRows + groupRows))
        }

        /// Row `row` of decoded group `group`.
        func decodedRow(group: Int, row: Int) -> UnsafeMutablePointer<UInt8> { decoded[group % 2] + row * paddedWidth }

        /// The rows of group `group` that lie in the plane.
        func validRows(group: Int) -> Int { max(0, min(groupRows, height - group * groupRows)) }

        deinit {
            for plane in decoded { plane.deallocate() }
            encoding.deallocate()
            corrected.deallocate()
            rowAbove.deallocate()
        }
    }

    /// Prepares the planes of `decoder` (after `startPlanes` said yes) for `parameters`; `correctClipping: false`
    /// leaves out the clipping correction (to measure what it does); `decimate: false` blurs every plane at full
    /// resolution (`StreamingBlenders.make`).
    init(
        decoder: JPEGRowDecoder, layout: sw_jpeg_planes, parameters: TiltShiftParameters, threads: Int,
        kernels: KernelVariant, decimate: Bool = true, correctClipping: Bool = true, token: CancellationToken
    ) {
        self.decoder = decoder
        self.token = token
        let widths = [layout.width.0, layout.width.1, layout.width.2]
        let heights = [layout.height.0, layout.height.1, layout.height.2]
        let padded = [layout.padded_width.0, layout.padded_width.1, layout.padded_width.2]
        let groups = [layout.group_rows.0, layout.group_rows.1, layout.group_rows.2]
        let h = [layout.h.0, layout.h.1, layout.h.2]
        let v = [layout.v.0, layout.v.1, layout.v.2]
        self.xFactor = Int(h[0] / h[1])
        self.yFactor = Int(v[0] / v[1])
        let correcting =
            correctClipping && parameters.blurRadius > 0
            && !TiltShiftMask.mask(width: decoder.width, height: decoder.height, parameters: parameters).isZero
        self.correctsClipping = correcting
        self.planes = (0..<3).map { i in
            let (xFactor, yFactor) = (Int(layout.max_h / h[i]), Int(layout.max_v / v[i]))
            let sigma = parameters.blurRadius
            let mask = TiltShiftMask.mask(
                planeWidth: Int(widths[i]), planeHeight: Int(heights[i]), xFactor: xFactor,
                yFactor: yFactor, imageWidth: decoder.width, imageHeight: decoder.height,
                parameters: parameters)
            let blender = StreamingBlenders.make(
                width: Int(widths[i]), height: Int(heights[i]), channels: 1,
                sigma: sigma == 0 ? 0 : sigma / Double(xFactor),
                verticalSigma: sigma == 0 ? 0 : sigma / Double(yFactor),
                mask: mask, levels: parameters.falloff.levels, threads: threads, kernels: kernels,
                separateBlurInput: correcting, decimate: decimate, token: token)
            return Plane(
                width: Int(widths[i]), height: Int(heights[i]), paddedWidth: Int(padded[i]),
                groupRows: Int(groups[i]), blender: blender)
        }
    }

    /// Decodes, filters and encodes every group into `encoder` (made with `JPEGRowEncoder(planes:)`).
    func run(
        into encoder: JPEGRowEncoder, decode decodeTime: inout Duration, decodeCPU: inout Duration,
        encode encodeTime: inout Duration, encodeCPU: inout Duration
    ) throws {
        let strides = planes.map(\.paddedWidth)
        let groupCount = (planes[0].height + planes[0].groupRows - 1) / planes[0].groupRows
        var decodedGroups = 0
        var encodedGroups = 0
        while encodedGroups < groupCount {
            if decodedGroups < groupCount {
                let start = StageClock.now
                try decoder.readPlanes(
                    into: planes.map { $0.decodedRow(group: decodedGroups, row: 0) }, strides: strides,
                    token: token)
                let (wall, cpu) = start.elapsed
                decodeTime += wall
                decodeCPU += cpu
                decodedGroups += 1
                if !correctsClipping {
                    for plane in planes { try feed(plane, rows: plane.decodedRow(group: decodedGroups - 1, row: 0)) }
                } else {
                    // Each group once the group below it is decoded; the last one at once.
                    if decodedGroups >= 2 { try correctAndFeed(group: decodedGroups - 2, groupCount: groupCount) }
                    if decodedGroups == groupCount {
                        try correctAndFeed(group: decodedGroups - 1, groupCount: groupCount)
                    }
                }
            }
            // Encode every group that all the planes have finished.
            while encodedGroups < groupCount,
                planes.allSatisfy({ $0.queuedRows >= min($0.groupRows, $0.height - $0.encodedRows) })
            {
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

    /// Corrects decoded group `group` for the decoder's clipping (the luma in place, the chroma into `corrected`)
    /// and feeds it; the next group, when there is one, must be decoded already.
    private func correctAndFeed(group: Int, groupCount: Int) throws {
        let (luma, cb, cr) = (planes[0], planes[1], planes[2])
        let rows = cb.validRows(group: group)
        for j in 0..<rows {
            func neighbours(_ plane: Plane) -> [UnsafePointer<UInt8>?] {
                let current = plane.decodedRow(group: group, row: j)
                let above = j > 0 ? plane.decodedRow(group: group, row: j - 1) : (group > 0 ? plane.rowAbove : current)
                let below =
                    j + 1 < rows
                    ? plane.decodedRow(group: group, row: j + 1)
                    : (group + 1 < groupCount ? plane.decodedRow(group: group + 1, row: 0) : current)
                return [UnsafePointer(above), UnsafePointer(current), UnsafePointer(below)]
            }
            let firstLumaRow = j * yFactor
            let lumaRows = min(yFactor, luma.validRows(group: group) - firstLumaRow)
            guard lumaRows > 0 else { continue }
            let lumaRowIndices = (0..<2).map { firstLumaRow + min($0, lumaRows - 1) }
            let clipped = Int(
                sw_ycc_correct_clipping(
                    lumaRowIndices.map { UnsafePointer(luma.decodedRow(group: group, row: $0)) },
                    lumaRowIndices.map { luma.corrected + $0 * luma.paddedWidth }, Int32(lumaRows), Int32(luma.width),
                    neighbours(cb), neighbours(cr), cb.corrected + j * cb.paddedWidth,
                    cr.corrected + j * cr.paddedWidth,
                    Int32(cb.width), Int32(xFactor), Int32(yFactor)))
            clippedPixels += clipped
            for r in firstLumaRow..<(firstLumaRow + lumaRows) { luma.isCorrected[r] = clipped > 0 }
            cb.isCorrected[j] = clipped > 0
            cr.isCorrected[j] = clipped > 0
        }
        for plane in [cb, cr] where rows > 0 {
            plane.rowAbove.update(from: plane.decodedRow(group: group, row: rows - 1), count: plane.width)
        }
        for plane in planes { try feed(plane, rows: plane.decodedRow(group: group, row: 0), corrected: true) }
    }

    /// Pushes the next group's valid rows (from `source`, `paddedWidth` apart) through the plane's blender, the
    /// rows marked in `isCorrected` blurred from `plane.corrected` when `corrected`; finished rows join its queue.
    private func feed(_ plane: Plane, rows source: UnsafeMutablePointer<UInt8>, corrected: Bool = false) throws {
        let rows = max(0, min(plane.groupRows, plane.height - plane.blender.received))
        var done = 0
        while done < rows {
            let (space, available) = plane.blender.inputSpace()
            let count = min(available, rows - done)
            for r in 0..<count {
                (space + r * plane.width).update(from: source + (done + r) * plane.paddedWidth, count: plane.width)
                if corrected, plane.isCorrected[done + r] {
                    plane.blender.setBlurInput(row: r, from: plane.corrected + (done + r) * plane.paddedWidth)
                }
            }
            try plane.blender.commit(rows: count) { finished, finishedRows, _ in
                let capacity = plane.queue.capacity
                plane.queue.append(contentsOf: UnsafeBufferPointer(start: finished, count: finishedRows * plane.width))
                if plane.queue.capacity != capacity { queueGrowths += 1 }
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
                    (row + plane.width).update(
                        repeating: source[plane.width - 1], count: plane.paddedWidth - plane.width)
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
