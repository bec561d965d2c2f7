import Vips

extension Fixtures {
    /// A panorama whose bands change smoothly, each its own way (across, down, diagonally): a
    /// window taken from the wrong place, or scaled wrong, shows as levels off.
    package static func panorama(width: Int, height: Int) throws -> VipsImage {
        var pixels: [UInt8] = []
        pixels.reserveCapacity(width * height * 3)
        for y in 0..<height {
            for x in 0..<width {
                pixels += [UInt8(x * 255 / (width - 1)), UInt8(y * 255 / (height - 1)), UInt8((x + y) * 255 / (width + height - 2))]
            }
        }
        return try VipsImage(pixels: pixels, width: width, height: height, bands: 3)
    }

    /// How far apart two images of one size are: the mean and the largest difference of a band value.
    package static func difference(_ a: VipsImage, _ b: VipsImage) throws -> (mean: Double, largest: Int) {
        let pairs = zip(try a.bytes(), try b.bytes()).map { abs(Int($0) - Int($1)) }
        return (Double(pairs.reduce(0, +)) / Double(max(1, pairs.count)), pairs.max() ?? 0)
    }
}
