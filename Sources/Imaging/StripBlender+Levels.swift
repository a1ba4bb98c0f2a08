import CImageCodecs

/// Several blur levels at once (`--falloff progressive`): the backward vertical pass steps every level's
/// recursion through the same rows, and each row is blended from every level's value through its weights.
extension StripBlender {
    /// `backwardPass` for several levels: each level's recursion steps through the same rows, and each row is
    /// blended from every level's value.
    func backwardPassOfLevels(strip: Range<Int>, from start: Int) throws {
        let exact = start == height - 1
        try parallelColumns { range in
            let (begin, end) = (range.lowerBound, range.upperBound)
            let levels = self.levels
            // Per level its ring (q1, q2, q3); `current` holds each level's q1 for the blend.
            let rings = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: 3 * levels)
            let current = UnsafeMutablePointer<UnsafePointer<Float>?>.allocate(capacity: levels)
            defer {
                rings.deallocate()
                current.deallocate()
            }
            for level in 0..<levels {
                let ring = self.backwardRows(level)
                (rings[3 * level], rings[3 * level + 1], rings[3 * level + 2]) = (
                    ring, ring + self.stride, ring + 2 * self.stride
                )
            }
            var y: Int
            if exact {
                for level in 0..<levels {
                    self.kernels.pointee.end(
                        self.verticalGaussians + level, self.bottom(level), self.floatRow(start, level: level),
                        self.floatRow(start - 1, level: level), self.floatRow(start - 2, level: level),
                        rings[3 * level], rings[3 * level + 1], rings[3 * level + 2], begin, end)
                    current[level] = UnsafePointer(rings[3 * level])
                }
                self.blendLevels(row: start, levels: current, strip: strip, columns: range)
                y = start - 1
            } else {
                for level in 0..<levels {
                    for q in 0..<3 {
                        (rings[3 * level + q] + begin).update(
                            from: self.floatRow(start, level: level) + begin, count: end - begin)
                    }
                }
                y = start
            }
            while y >= strip.lowerBound {
                if y % Self.rowsPerCancelCheck == 0 { try self.token.check() }
                for level in 0..<levels {
                    let (q1, q2, q3) = (rings[3 * level], rings[3 * level + 1], rings[3 * level + 2])
                    self.kernels.pointee.backward(
                        self.verticalGaussians + level, self.floatRow(y, level: level), q3,
                        q1, q2, q3, begin, end)
                    (rings[3 * level], rings[3 * level + 1], rings[3 * level + 2]) = (q3, q1, q2)
                    current[level] = UnsafePointer(q3)
                }
                self.blendLevels(row: y, levels: current, strip: strip, columns: range)
                y -= 1
            }
        }
    }

    /// Blends row `y` from `levels` blurred rows (one per level) through its row of weights, on `columns`.
    @inline(__always)
    func blendLevels(
        row y: Int, levels: UnsafePointer<UnsafePointer<Float>?>, strip: Range<Int>,
        columns: Range<Int>
    ) {
        guard strip.contains(y), rowMaxima[y] != 0 else { return }
        let end = min(columns.upperBound, samples)
        guard columns.lowerBound < end else { return }
        if !weightRowIsFixed {
            mask.fill(row: y, into: weightRow, samples: columns.lowerBound..<end, channels: channels)
        }
        let row = byteRow(y)
        if channels == 4 {
            kernels.pointee.blend_levels_premultiplied(
                row, levels, Int32(self.levels), weightRow, row, columns.lowerBound, end)
        } else {
            kernels.pointee.blend_levels(row, levels, Int32(self.levels), weightRow, row, columns.lowerBound, end)
        }
    }
}
