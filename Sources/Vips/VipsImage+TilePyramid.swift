extension VipsImage {
    /// Writes the image as a tile pyramid with libvips' `dzsave`, which streams: it reads the
    /// image a strip of tiles at a time and shrinks each strip into the levels below.
    ///
    /// - Parameters:
    ///   - path: the pyramid's name without extension: DeepZoom writes `path.dzi` and the folder
    ///     `path_files`; the other layouts write the folder `path`.
    ///   - layout: `dz`, `iiif`, `iiif3`, `zoomify` or `google`.
    ///   - tileSize: the tile side in pixels, overlap not counted.
    ///   - overlap: pixels each tile shares with its neighbours.
    ///   - tileSuffix: each tile's saver and options, for example `.jpg[Q=80]`.
    ///   - id: IIIF layouts: the URL `info.json` names the image by, before the folder's name
    ///     (nil: libvips' placeholder).
    public func writeTilePyramid(
        to path: String, layout: String, tileSize: Int, overlap: Int, tileSuffix: String, id: String? = nil
    ) throws(VipsError) {
        var arguments: [String: VipsValue] = [
            "in": .image(self), "filename": .string(path), "layout": .string(layout), "tile_size": .integer(tileSize),
            "overlap": .integer(overlap), "suffix": .string(tileSuffix), "strip": .boolean(true),
            // Every tile: the Google layout would leave out those all but the background colour
            // (a white sky, a page's margin), which a viewer then asks for in vain.
            "skip_blanks": .integer(-1),
        ]
        if let id { arguments["id"] = .string(id) }
        _ = try Vips.call("dzsave", arguments)
    }
}
