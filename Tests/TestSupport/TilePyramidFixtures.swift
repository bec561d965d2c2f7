import Foundation

/// What a DeepZoom pyramid must hold, worked out from the DeepZoom format itself rather than
/// from libvips: the tests compare the files `dzsave` wrote with these.
package enum DeepZoomExpectation {
    /// Every tile of a DeepZoom pyramid of a `width`×`height` image, as `LEVEL/COLUMN_ROW.EXT`,
    /// with its width and height. Level `n` is the image scaled by 2^(n − top), rounded up, down
    /// to 1×1 at level 0, where `top` is the least with 2^top ≥ the longer side; each level is
    /// cut into `size`-pixel tiles, each reaching `overlap` pixels into its neighbours.
    package static func tiles(width: Int, height: Int, size: Int, overlap: Int, extension ext: String) -> [String: (
        width: Int, height: Int
    )] {
        var top = 0
        while 1 << top < max(width, height) { top += 1 }
        var tiles: [String: (width: Int, height: Int)] = [:]
        for level in 0...top {
            let scale = 1 << (top - level)
            let levelWidth = (width + scale - 1) / scale
            let levelHeight = (height + scale - 1) / scale
            for column in 0..<((levelWidth + size - 1) / size) {
                for row in 0..<((levelHeight + size - 1) / size) {
                    let tileWidth = min(levelWidth, (column + 1) * size + overlap) - max(0, column * size - overlap)
                    let tileHeight = min(levelHeight, (row + 1) * size + overlap) - max(0, row * size - overlap)
                    tiles["\(level)/\(column)_\(row).\(ext)"] = (tileWidth, tileHeight)
                }
            }
        }
        return tiles
    }

    /// The width and height a `.dzi` file declares, or nil when it is not one.
    package static func declaredSize(ofDZI path: String) -> (width: Int, height: Int)? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        func attribute(_ name: String) -> Int? {
            guard let start = text.range(of: name + "=\"") else { return nil }
            return Int(text[start.upperBound...].prefix { $0.isNumber })
        }
        guard let width = attribute("Width"), let height = attribute("Height") else { return nil }
        return (width, height)
    }

    /// What is wrong with the DeepZoom pyramid `stem` in `folder` as a viewer would find it, or
    /// nil when it is whole or absent: absent when there is no `.dzi`; whole when the `.dzi`
    /// declares one of `sizes` and the tiles beside it are exactly that size's, every one.
    package static func problem(
        in folder: String, stem: String = "photo", sizes: [(width: Int, height: Int)], size: Int = 254, overlap: Int = 1,
        extension ext: String
    ) -> String? {
        let dzi = folder + "/" + stem + ".dzi"
        guard FileManager.default.fileExists(atPath: dzi) else { return nil }
        guard let declared = declaredSize(ofDZI: dzi) else { return "\(stem).dzi is not whole" }
        guard sizes.contains(where: { $0 == declared }) else { return "\(stem).dzi declares \(declared)" }
        let expected = tiles(width: declared.width, height: declared.height, size: size, overlap: overlap, extension: ext)
        let found = TemporaryDirectory.files(below: folder + "/" + stem + "_files")
        guard found == expected.keys.sorted() else {
            return "\(stem).dzi declares \(declared) but \(stem)_files has \(found.count) files, not \(expected.count)"
        }
        return nil
    }
}
