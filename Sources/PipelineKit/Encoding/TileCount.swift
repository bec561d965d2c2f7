/// How many tiles libvips' `dzsave` writes for an image, by layout: what a whole pyramid has.
/// dzsave reports no tile it failed to write (a full disk), so a pyramid is counted before it
/// is put in place.
///
/// DeepZoom halves the image down to one pixel; the other layouts halve it until it fits one
/// tile, each level's sides rounded up. IIIF names each tile by its region of the full image and
/// its size, and the tiles of two levels that share a name (a narrow edge) are one file. Google's
/// layout writes a blank tile beside these, for the map's edges.
enum TileCount {
    static func expected(_ layout: TileSettings.Layout, width: Int, height: Int, tileSize: Int) -> Int {
        let (width, height, tileSize) = (max(1, width), max(1, height), max(1, tileSize))
        switch layout {
        case .dz:
            // Levels 0 (1×1) to the first whose scale covers the longer side.
            var deepest = 0
            while deepest < 62, 1 << deepest < max(width, height) { deepest += 1 }
            return (0...deepest).reduce(0) { total, level in
                let factor = 1 << (deepest - level)
                return total + tiles(up(width, factor), tileSize) * tiles(up(height, factor), tileSize)
            }
        case .zoomify, .google:
            return factors(width, height, tileSize).reduce(0) { total, factor in
                total + tiles(up(width, factor), tileSize) * tiles(up(height, factor), tileSize)
            }
        case .iiif, .iiif3:
            // IIIF 2 names a tile's size by its width alone (`w,`), 3 by both (`w,h`).
            var names = Set<[Int]>()
            for factor in factors(width, height, tileSize) {
                let region = tileSize * factor
                for left in stride(from: 0, to: width, by: region) {
                    for top in stride(from: 0, to: height, by: region) {
                        let (regionWidth, regionHeight) = (min(region, width - left), min(region, height - top))
                        let size = layout == .iiif3 ? [up(regionWidth, factor), up(regionHeight, factor)] : [up(regionWidth, factor)]
                        names.insert([left, top, regionWidth, regionHeight] + size)
                    }
                }
            }
            return names.count
        }
    }

    /// The scale factors of the levels of a layout that stops at one tile: 1, 2, 4, … up to the
    /// first whose level fits one tile (what an IIIF `info.json` lists as `scaleFactors`).
    static func factors(_ width: Int, _ height: Int, _ tileSize: Int) -> [Int] {
        var factors = [1]
        // Bounded: a side of at most 2^31 pixels halves to one tile within 32 steps.
        while factors.count < 32, up(max(width, height), factors[factors.count - 1]) > tileSize {
            factors.append(factors[factors.count - 1] * 2)
        }
        return factors
    }

    private static func up(_ length: Int, _ factor: Int) -> Int { (length + factor - 1) / factor }
    private static func tiles(_ length: Int, _ tileSize: Int) -> Int { up(length, tileSize) }
}
