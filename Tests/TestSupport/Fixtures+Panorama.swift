import Vips

extension Fixtures {
    /// A panorama whose bands change smoothly, each its own way (across, down, diagonally): a
    /// window taken from the wrong place, or scaled wrong, shows as levels off.
    package static func panorama(width: Int, height: Int) throws -> VipsImage {
        let pixels = filled(count: width * height * 3) { buffer in
            var at = 0
            for y in 0..<height {
                let down = UInt8(y * 255 / (height - 1))
                for x in 0..<width {
                    buffer[at] = UInt8(x * 255 / (width - 1))
                    buffer[at + 1] = down
                    buffer[at + 2] = UInt8((x + y) * 255 / (width + height - 2))
                    at += 3
                }
            }
        }
        return try VipsImage(pixels: pixels, width: width, height: height, bands: 3)
    }

    /// How far apart two images of one size are: the mean and the largest difference of a band value.
    package static func difference(_ a: VipsImage, _ b: VipsImage) throws -> (mean: Double, largest: Int) {
        let (first, second) = (try a.bytes(), try b.bytes())
        let count = min(first.count, second.count)
        var (total, largest) = (0, 0)
        first.withUnsafeBufferPointer { first in
            second.withUnsafeBufferPointer { second in
                for index in 0..<count {
                    let difference = abs(Int(first[index]) - Int(second[index]))
                    total += difference
                    largest = max(largest, difference)
                }
            }
        }
        return (Double(total) / Double(max(1, count)), largest)
    }
}
