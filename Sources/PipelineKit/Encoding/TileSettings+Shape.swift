import Foundation

extension TileSettings.Layout {
    /// An entry below `folder`, the folder a pyramid in this layout replaces whole
    /// (`replacedFolder(ofPyramidAt:)`), that no pyramid in this layout holds, by its name, kind
    /// and depth: a user's own file, a folder of another layout, a link. Nil when every entry is
    /// one a pyramid holds, or there is no folder. A pyramid made again replaces its folder, and
    /// what is in it goes: only an earlier pyramid may.
    ///
    /// Tiles are taken in any tile format and size, so that a pyramid made with other settings,
    /// or by an earlier run that was stopped, is still one. A folder that cannot be read is
    /// named as such an entry; the folder itself as the empty path.
    func entryNoPyramidHolds(in folder: String) -> String? {
        var info = stat()
        // No folder there (or a file, which is replaced as any output's is): nothing to walk.
        guard lstat(folder, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else { return nil }
        return firstForeignEntry(in: folder, at: [])
    }

    /// The first entry below `folder` (at `parts` below the pyramid's folder) that `holds` does
    /// not take, by `readdir`'s kinds: a tree of tens of thousands of tiles is read quickly. A
    /// folder that cannot be read is such an entry, as what is in it cannot be told.
    private func firstForeignEntry(in folder: String, at parts: [String]) -> String? {
        guard let directory = opendir(folder) else { return parts.joined(separator: "/") }
        defer { closedir(directory) }
        while let entry = readdir(directory) {
            let bytes = withUnsafeBytes(of: entry.pointee.d_name) { Array($0.prefix { $0 != 0 }) }
            if bytes == [UInt8(ascii: ".")] || bytes == [UInt8(ascii: "."), UInt8(ascii: ".")] { continue }
            let name = String(decoding: bytes, as: UTF8.self)
            let path = folder + "/" + name
            var kind: EntryKind? = Int(entry.pointee.d_type) == DT_REG ? .file : Int(entry.pointee.d_type) == DT_DIR ? .folder : nil
            // Some file systems leave the kind to `lstat`.
            if Int(entry.pointee.d_type) == DT_UNKNOWN {
                var info = stat()
                let mode = lstat(path, &info) == 0 ? info.st_mode & S_IFMT : 0
                kind = mode == S_IFREG ? .file : mode == S_IFDIR ? .folder : nil
            }
            guard let kind, holds(parts + [name], as: kind) else { return (parts + [name]).joined(separator: "/") }
            if kind == .folder, let foreign = firstForeignEntry(in: path, at: parts + [name]) { return foreign }
        }
        return nil
    }

    private enum EntryKind { case file, folder }

    /// Whether a pyramid in this layout holds an entry of `kind` at `parts` below its folder.
    private func holds(_ parts: [String], as kind: EntryKind) -> Bool {
        guard let name = parts.last else { return false }
        let isFolder = kind == .folder
        switch (self, parts.count) {
        // libvips' list of the image's fields, which pipeline removes, and earlier versions kept.
        case (_, 1) where name == "vips-properties.xml": return !isFolder
        case (.dz, 1): return isFolder && name.isNumber
        case (.dz, 2): return !isFolder && Self.isTile(name) { $0.split(separator: "_").count == 2 && $0.allDigitsBesides("_") }
        case (.zoomify, 1): return isFolder ? name.hasPrefix("TileGroup") && name.dropFirst(9).isNumber : name == "ImageProperties.xml"
        case (.zoomify, 2): return !isFolder && Self.isTile(name) { $0.split(separator: "-").count == 3 && $0.allDigitsBesides("-") }
        case (.google, 1): return isFolder ? name.isNumber : name == "blank.png"
        case (.google, 2): return isFolder && name.isNumber
        case (.google, 3): return !isFolder && Self.isTile(name) { $0.isNumber }
        case (.iiif, 1), (.iiif3, 1): return isFolder ? name == "full" || name.allDigitsBesides(",") : name == "info.json"
        case (.iiif, 2), (.iiif3, 2): return isFolder && (name == "full" || name == "max" || name.allDigitsBesides(","))
        case (.iiif, 3), (.iiif3, 3): return isFolder && name.isNumber
        case (.iiif, 4), (.iiif3, 4): return !isFolder && Self.isTile(name) { $0 == "default" }
        default: return false
        }
    }

    /// Whether `name` is a tile's: a stem `stem` accepts, and a tile format's extension.
    private static func isTile(_ name: String, stem: (Substring) -> Bool) -> Bool {
        guard let dot = name.lastIndex(of: ".") else { return false }
        return ["jpg", "jpeg", "png", "webp"].contains(name[name.index(after: dot)...].lowercased()) && stem(name[..<dot])
    }
}

extension StringProtocol {
    /// Whether every character is an ASCII digit, and there is one.
    fileprivate var isNumber: Bool { !isEmpty && allSatisfy { $0.isASCII && $0.isNumber } }

    /// Whether every character is an ASCII digit or `separator`, with a digit among them.
    fileprivate func allDigitsBesides(_ separator: Character) -> Bool {
        contains { $0.isASCII && $0.isNumber } && allSatisfy { ($0.isASCII && $0.isNumber) || $0 == separator }
    }
}
