import Foundation

/// Building a tile pyramid output (`"tiles"`): its settings, and what such an output cannot
/// have beside them.
extension DefinitionBuilder {
    /// `.some(nil)` for an output without `tiles`; `.some(settings)` for one whose `tiles`
    /// builds; nil (with the problems) when it does not.
    mutating func buildTiles(_ node: JSONNode, at path: String, pathText: String) -> TileSettings?? {
        guard let tilesNode = node["tiles"] else { return .some(nil) }
        let tilesPath = join(path, "tiles")
        var complete = true
        for key in ["encode", "formats", "widths", "placeholders"] {
            guard let other = node[key] else { continue }
            complete = false
            let why =
                switch key {
                case "widths": "a tiles output is one pyramid of the whole image, at one size: leave out widths"
                case "placeholders": "placeholders are made from an image file, and a tiles output writes none"
                default: "give tiles or \(key), not both: the tiles' format and quality go in tiles"
                }
            problems.append(.init(path: join(path, key), location: other.location, message: why))
        }
        guard isWellShaped(tilesPath) else { return nil }
        let settings: TileSettings
        let values: [String: JSONNode]
        if case .object(let members) = tilesNode.value {
            values = Dictionary(members.map { ($0.key, $0.value) }, uniquingKeysWith: { first, _ in first })
        } else {
            values = [:]
        }
        guard case .object(let options) = TileSettings.shape else { return nil }
        do {
            settings = try TileSettings(options: ProcessorOptions(values: values, definitions: options, baseDirectory: baseDirectory))
        } catch {
            problems.append(
                .init(
                    path: error.option.map { join(tilesPath, $0) } ?? tilesPath,
                    location: error.option.flatMap { values[$0]?.location } ?? tilesNode.location, message: error.message))
            return nil
        }
        let isDZI = pathText.lowercased().hasSuffix(".dzi")
        let pathProblem: String? =
            if let store = ObjectStores.displayName(of: pathText) {
                "tile pyramids are written to local folders, not to \(store)"
            } else if settings.layout == .dz, !isDZI {
                "a DeepZoom pyramid's path names its .dzi file (its tiles go in the folder beside it, NAME_files), "
                    + "for example \"tiles/{stem}.dzi\""
            } else if settings.layout != .dz, isDZI {
                "the \(settings.layout.rawValue) layout writes a folder, so the path names the folder, not a .dzi file "
                    + "(for example \"tiles/{stem}\"); a .dzi file is the dz layout's"
            } else {
                nil
            }
        if let pathProblem {
            complete = false
            problems.append(.init(path: join(path, "path"), location: node["path"]?.location, message: pathProblem))
        }
        return complete ? .some(settings) : nil
    }
}
