/// Smaller copies of an image, for previews.
extension ImageBuffer {
    /// The image scaled down to fit within `maxSide` × `maxSide` pixels, keeping its aspect ratio, each
    /// output pixel the mean of the source pixels it covers (a box filter: no aliasing for the large
    /// factors of a thumbnail). An image that fits already is returned as it is.
    ///
    /// CPU-bound (it reads every source pixel once): run it on `ComputeThreads`, never on the
    /// cooperative pool.
    public func downscaled(toFit maxSide: Int) -> ImageBuffer {
        let side = max(1, maxSide)
        guard width > side || height > side else { return self }
        let scale = Double(side) / Double(max(width, height))
        let outWidth = max(1, Int((Double(width) * scale).rounded()))
        let outHeight = max(1, Int((Double(height) * scale).rounded()))
        let channels = self.channels
        // Column ranges are the same for every output row: computed once.
        let columnStarts = (0...outWidth).map { min(width, $0 * width / outWidth) }
        var sums = [UInt32](repeating: 0, count: outWidth * channels)
        return pixels.withUnsafeBufferPointer { source in
            ImageBuffer(width: outWidth, height: outHeight, channels: channels) { output in
                for outY in 0..<outHeight {
                    let rowStart = outY * height / outHeight
                    let rowEnd = max(rowStart + 1, (outY + 1) * height / outHeight)
                    for index in sums.indices { sums[index] = 0 }
                    for y in rowStart..<rowEnd {
                        let row = y * width * channels
                        for outX in 0..<outWidth {
                            let base = outX * channels
                            for x in columnStarts[outX]..<max(columnStarts[outX] + 1, columnStarts[outX + 1]) {
                                let pixel = row + x * channels
                                for channel in 0..<channels { sums[base + channel] += UInt32(source[pixel + channel]) }
                            }
                        }
                    }
                    for outX in 0..<outWidth {
                        let columns = max(1, columnStarts[outX + 1] - columnStarts[outX])
                        let count = UInt32(columns * (rowEnd - rowStart))
                        let base = outX * channels
                        for channel in 0..<channels {
                            output[(outY * outWidth + outX) * channels + channel] = UInt8(
                                (sums[base + channel] + count / 2) / count)
                        }
                    }
                }
            }
        }
    }
}
