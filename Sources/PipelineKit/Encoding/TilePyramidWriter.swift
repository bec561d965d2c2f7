import Foundation
import Vips

/// Writes a tile pyramid so that its path only ever holds a whole pyramid, the old one or none:
/// libvips' `dzsave` writes it into a temporary folder beside the target (named as
/// `ImageWriter`'s temporary files are, so `TemporaryFileSweeper` removes those a killed run
/// left), the folder is flushed to disk, and its entries are renamed into place.
///
/// A folder layout (iiif, iiif3, zoomify, google) is one entry: the new folder takes the old
/// one's place in one exchange (`renameat2` with `RENAME_EXCHANGE`), so a reader sees the old
/// pyramid or the new one. DeepZoom is two entries, `NAME.dzi` and the folder `NAME_files`, and
/// no rename moves two entries at once. Viewers open the `.dzi` first and find the tiles from it,
/// so the `.dzi` is what says a pyramid is there: the old `.dzi` is moved away first, then the
/// tiles are exchanged, and the new `.dzi` is renamed in last. A `.dzi` is therefore never beside
/// tiles it does not describe; in between (and after a crash in between) there is briefly no
/// `.dzi`, which a viewer sees as no pyramid, never a half one, and the next run makes it again.
enum TilePyramidWriter {
    /// Makes the pyramid of `image` for the output at `path` (the `.dzi` file for DeepZoom,
    /// else the layout's folder) in a temporary folder beside it, which the result owns until
    /// its commit. On any failure here the temporary folder is removed.
    static func writeUncommitted(
        _ image: VipsImage, settings: TileSettings, to path: String, root: String, protecting inputs: ProtectedInputs
    ) throws(ItemError) -> UncommittedPyramid {
        let folder = try ImageWriter.preparedFolder(for: path, root: root)
        let name = (path as NSString).lastPathComponent
        let stem = settings.layout == .dz ? (name as NSString).deletingPathExtension : name
        let temporary = folder + "/" + ImageWriter.temporaryName(for: name)
        guard mkdir(temporary, 0o777) == 0 else {
            throw ItemError.system(.writing, stage: .encode, "cannot write in \(folder)")
        }
        // Held open until the pyramid is in place or removed, so that it can be found and
        // removed after a rename of the output folder during the run.
        let descriptor = open(temporary, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else {
            let error = ItemError.system(.writing, stage: .encode, "cannot write in \(folder)")
            rmdir(temporary)
            throw error
        }
        do throws(ItemError) {
            do {
                // Tiles carry no metadata. libvips 8.14's WebP saver writes EXIF, XMP and the
                // profile despite strip, so they are removed first, as the encoder removes what
                // an output does not keep.
                let metadata = image.fieldNames.filter { ImageEncoder.metadataKind(of: $0) != nil }
                var bare = metadata.isEmpty ? image : try image.removingFields(metadata)
                // JPEG tiles have no alpha: flattened onto white, as the jpeg encoder's default
                // background, where libvips' saver would flatten them onto black.
                if settings.format == .jpeg, bare.hasAlpha { bare = try bare.flattened(ontoSRGB: [255, 255, 255]) }
                try bare.writeTilePyramid(
                    to: temporary + "/" + stem, layout: settings.layout.rawValue, tileSize: settings.size, overlap: settings.overlap,
                    tileSuffix: settings.tileSuffix, id: settings.id)
            } catch {
                // libvips' error text is the process's: beside other work it may hold another
                // operation's lines, and not dzsave's own. A disk nearly full is taken as the
                // cause whatever the text says; one with room is asked of the text.
                if let code = spaceProblem(in: temporary, encoderSaid: "") {
                    throw ItemError.system(.writing, stage: .encode, "cannot write \(path)", code: code)
                }
                if ImageWriter.isWriteFailure(error.message) {
                    throw ItemError(.writing, stage: .encode, reason: "cannot write \(path): \(error.message)", underlying: error)
                }
                throw ItemError(.encoding, stage: .encode, reason: ItemError.reason(for: error), underlying: error)
            }
            // libvips' dzsave reports no tile it failed to write: a pyramid written onto a full
            // disk (or past `ulimit -f`) succeeds with tiles, or its `.dzi`, missing. Whether
            // there was room to the end is asked of the disk itself.
            if let code = spaceProblem(in: temporary, encoderSaid: nil) {
                throw ItemError.system(.writing, stage: .encode, "cannot write \(path)", code: code)
            }
            // libvips lists the image's fields beside the tiles.
            for properties in [temporary + "/" + stem + "_files/vips-properties.xml", temporary + "/" + stem + "/vips-properties.xml"] {
                unlink(properties)
            }
            // With the space freed again in between (another output's pyramid that failed and
            // was removed), the probe finds room: the tiles are counted too, on the one walk
            // that sums the pyramid's bytes.
            let expected = TileCount.expected(settings.layout, width: image.width, height: image.height, tileSize: settings.size)
            let (found, bytes) = contents(below: temporary, tilesIn: settings.format.format)
            var byteCount = bytes
            guard found >= expected else {
                throw ItemError(
                    .writing, stage: .encode,
                    reason: "cannot write \(path): libvips wrote \(found) of its \(expected) tiles (was the disk full?)")
            }
            if settings.layout == .iiif || settings.layout == .iiif3 {
                byteCount += try completeInfo(
                    in: temporary + "/" + stem + "/info.json", name: stem, width: image.width, height: image.height, settings: settings,
                    path: path)
            }
            return UncommittedPyramid(
                path: path, temporary: temporary, descriptor: descriptor, stem: stem, layout: settings.layout,
                byteCount: byteCount, protectedInputs: inputs)
        } catch {
            removeTree(temporary, openAs: descriptor)
            throw error
        }
    }

    /// A pyramid written in its temporary folder, not yet flushed nor renamed into place:
    /// `flush()` then `moveIntoPlace()` do both, or remove it.
    struct UncommittedPyramid: Sendable {
        /// The output's path: the `.dzi` file, or the layout's folder.
        let path: String
        /// The temporary folder beside `path` that holds the pyramid.
        let temporary: String
        /// The temporary folder, open (see `removeTree(_:openAs:)`).
        let descriptor: Int32
        /// The pyramid's name in the temporary folder: the `.dzi` file's without its extension,
        /// or the folder's.
        let stem: String
        let layout: TileSettings.Layout
        /// The size of every file of the pyramid together, in bytes.
        let byteCount: Int
        /// The run's local inputs, which no rename may replace.
        var protectedInputs = ProtectedInputs()
        /// Called after each rename into place: tests look there at what a reader would find.
        var afterEachRename: (@Sendable () -> Void)? = nil

        /// The folder `path` is in.
        private var folder: String { (path as NSString).deletingLastPathComponent }

        /// The entries renamed into place, each with its place in the temporary folder: the
        /// tiles' folder, then (DeepZoom) the `.dzi` file, in the order they are renamed.
        private var entries: [(new: String, target: String)] {
            switch layout {
            case .dz:
                [(temporary + "/" + stem + "_files", folder + "/" + stem + "_files"), (temporary + "/" + stem + ".dzi", path)]
            case .iiif, .iiif3, .zoomify, .google:
                [(temporary + "/" + stem, path)]
            }
        }

        /// Flushes every file of the pyramid to disk at once (`syncfs` of the temporary
        /// folder's file system: one call rather than one per tile); on failure removes it.
        func flush() throws(ItemError) {
            guard LinuxCalls.syncfs(descriptor) == 0 else {
                let error = ItemError.system(.writing, stage: .encode, "cannot flush \(path) to disk")
                removeTree(temporary, openAs: descriptor)
                throw error
            }
        }

        /// Removes the pyramid unflushed, wherever its temporary folder now is.
        func discard() {
            removeTree(temporary, openAs: descriptor)
        }

        /// Renames the pyramid into place (see `TilePyramidWriter`) and removes the temporary
        /// folder, which then holds the old pyramid; on failure puts back what it moved.
        /// - Returns: nil: a pyramid is many files, stamped by its path.
        func moveIntoPlace() throws(ItemError) -> FileStamp? {
            defer { removeTree(temporary, openAs: descriptor) }
            for target in entries.map(\.target) {
                // Checked at the last moment too: a symbolic link made during the run may lead the
                // path to an input, which planning could not see.
                if let read = protectedInputs.readFile(at: target) {
                    throw ItemError(
                        .outputPath, stage: .encode,
                        reason: "\(target) is \(read) (a symbolic link made during the run leads there): it was not overwritten")
                }
            }
            // DeepZoom's old `.dzi` is moved aside and removed, and a folder layout's exchanged:
            // a FIFO or a device made in such a place during the run would be lost with it.
            for target in Set(entries.map(\.target) + [path]) {
                if let refusal = RenameTarget.refusal(at: target, folders: false) {
                    throw ItemError(.outputPath, stage: .encode, reason: "\(target) is \(refusal): the pyramid was not put in its place")
                }
            }
            // The folder replaced goes with what it holds: only an earlier pyramid's tiles may.
            let replaced = layout.replacedFolder(ofPyramidAt: path)
            if let foreign = layout.entryNoPyramidHolds(in: replaced) {
                let what =
                    foreign.isEmpty ? "cannot be read, so what it holds" : "holds \(foreign), which no \(layout.rawValue) pyramid holds"
                throw ItemError(
                    .outputPath, stage: .encode,
                    reason: "\(replaced) \(what): it was not replaced, as that would remove it; move it, or choose another path")
            }
            // Each entry is there before any is moved: a pyramid is never put in place in part.
            for (new, _) in entries where access(new, F_OK) != 0 {
                let missing = (new as NSString).lastPathComponent
                throw ItemError.system(.writing, stage: .encode, "cannot write \(path): libvips left no \(missing)")
            }
            // DeepZoom: the old descriptor goes first, so no `.dzi` ever describes tiles it did not make.
            let oldDescriptor = temporary + "/old-" + stem + ".dzi"
            let movedDescriptor = layout == .dz && rename(path, oldDescriptor) == 0
            if layout == .dz, !movedDescriptor, errno != ENOENT {
                throw ItemError.system(.writing, stage: .encode, "cannot replace \(path)")
            }
            if movedDescriptor { afterEachRename?() }
            for (index, (new, target)) in entries.enumerated() {
                guard TilePyramidWriter.replace(target, with: new, keepingOldIn: temporary) else {
                    let error = ItemError.system(.writing, stage: .encode, "cannot move the finished pyramid to \(target)")
                    // The old descriptor goes back only beside its own tiles.
                    if movedDescriptor, index == 0 { rename(oldDescriptor, path) }
                    throw error
                }
                afterEachRename?()
            }
            return nil
        }
    }

    /// Puts `new` at `target` in one step: exchanged with what is there (which is left at
    /// `new`'s place in `scratch`), or renamed when nothing is. Where the file system cannot
    /// exchange, the old entry is renamed into `scratch` first, so there is a moment with none.
    static func replace(_ target: String, with new: String, keepingOldIn scratch: String) -> Bool {
        if LinuxCalls.rename(new, target, flags: LinuxCalls.renameNoReplace) == 0 { return true }
        guard errno == EEXIST || errno == EINVAL || errno == ENOSYS else { return false }
        if LinuxCalls.rename(new, target, flags: LinuxCalls.renameExchange) == 0 { return true }
        guard errno == EINVAL || errno == ENOSYS else { return false }
        // A file system without exchange (or without renameat2's flags at all).
        var info = stat()
        if lstat(target, &info) == 0 {
            guard rename(target, scratch + "/old-" + (target as NSString).lastPathComponent) == 0 else { return false }
        }
        return rename(new, target) == 0
    }

    /// Whether the pyramid whose journal record is at `path` still has what the record does not
    /// stamp: DeepZoom's tiles folder beside the `.dzi`, or a folder layout's descriptor.
    static func isInPlace(_ path: String, layout: TileSettings.Layout) -> Bool {
        var info = stat()
        switch layout {
        case .dz:
            let tiles = layout.replacedFolder(ofPyramidAt: path)
            return stat(tiles, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR
        case .iiif, .iiif3, .zoomify, .google:
            return layout.descriptor.map { stat(path + "/" + $0, &info) == 0 } ?? true
        }
    }

    /// Removes `path` and everything below it, without following symbolic links.
    static func removeTree(_ path: String) {
        try? FileManager.default.removeItem(atPath: path)
    }

    /// Removes the folder made at `path` and open as `descriptor` wherever it now is (a folder
    /// renamed during the run takes it along), and closes it.
    static func removeTree(_ path: String, openAs descriptor: Int32) {
        removeTree(ImageWriter.currentPath(of: descriptor) ?? path)
        close(descriptor)
    }

    /// How many regular files below `folder` are tiles in `format` (by their extension), and
    /// the size of all its regular files together, in bytes: one walk for both.
    static func contents(below folder: String, tilesIn format: EncoderSettings.Format) -> (tiles: Int, bytes: Int) {
        guard let walker = FileManager.default.enumerator(atPath: folder) else { return (0, 0) }
        let suffix = "." + format.fileExtension
        var (tiles, bytes) = (0, 0)
        var info = stat()
        while let relative = walker.nextObject() as? String {
            guard lstat(folder + "/" + relative, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { continue }
            bytes += Int(info.st_size)
            if relative.hasSuffix(suffix) { tiles += 1 }
        }
        return (tiles, bytes)
    }

    /// Completes the IIIF `info.json` libvips wrote. It leaves the top level (the whole image
    /// in one tile) out of `scaleFactors`, though it writes that level's tile: a pyramid that
    /// fits one tile listed none, which viewers cannot open, and a larger one had no overview.
    /// The list is written again as every power of two up to the first whose level fits one
    /// tile, the levels written. And Image API 3 assumes JPEG tiles of a level-0 service: WebP
    /// or PNG tiles are named in `extraFormats` and `preferredFormats`, or viewers ask for
    /// `default.jpg`, which is not there. The image's id, which libvips writes as the `id`
    /// setting and the folder's `name` as they are, is written again as a URL, its name
    /// percent-encoded, in a JSON string: a `"` in a name broke the file, a `#` or `%` named
    /// another image. Returns how many bytes longer the file became.
    static func completeInfo(in infoFile: String, name: String, width: Int, height: Int, settings: TileSettings, path: String)
        throws(ItemError) -> Int
    {
        let factors = TileCount.factors(width, height, settings.size)
        guard let info = try? String(contentsOfFile: infoFile, encoding: .utf8),
            let list = info.range(of: #""scaleFactors"\s*:\s*\[[^\]]*\]"#, options: .regularExpression)
        else {
            throw ItemError(.encoding, stage: .encode, reason: "libvips wrote no scaleFactors in the info.json of \(path)")
        }
        var listed = info.replacingCharacters(in: list, with: "\"scaleFactors\": [\(factors.map(String.init).joined(separator: ", "))]")
        // Up to the key libvips writes next: a name may hold a line break, which libvips writes as it is.
        if let line = listed.range(of: #"\"@?id\": \"(?s:.*?)\",\n(?=  \"(profile|type)\")"#, options: .regularExpression) {
            let key = listed[line].hasPrefix("\"@id\"") ? "@id" : "id"
            listed.replaceSubrange(line, with: "\"\(key)\": \(JSONNode.quoted(Self.imageID(settings.id, name: name))),\n")
        }
        if settings.layout == .iiif3, settings.format != .jpeg, let end = listed.range(of: "}", options: .backwards) {
            let format = "[\"\(settings.format.format.fileExtension)\"]"
            listed.replaceSubrange(end, with: ",\n  \"extraFormats\": \(format),\n  \"preferredFormats\": \(format)\n}")
        }
        do {
            try Data(listed.utf8).write(to: URL(fileURLWithPath: infoFile))
            return listed.utf8.count - info.utf8.count
        } catch {
            throw ItemError(.writing, stage: .encode, reason: "cannot write \(path)/info.json: \(error.localizedDescription)")
        }
    }

    /// The IIIF id of the pyramid folder `name` served under `id` (libvips' placeholder when
    /// none): the name percent-encoded as one segment of a URL's path.
    static func imageID(_ id: String?, name: String) -> String {
        var segment = CharacterSet.alphanumerics.intersection(CharacterSet(charactersIn: Unicode.Scalar(0)...Unicode.Scalar(127)))
        segment.insert(charactersIn: "-._~!$&'()*+,;=:@")
        let base = id ?? "https://example.com/iiif"
        return (base.hasSuffix("/") ? String(base.dropLast()) : base) + "/"
            + (name.addingPercentEncoding(withAllowedCharacters: segment) ?? name)
    }

    /// ENOSPC (or EDQUOT, or EFBIG past `ulimit -f`) when the file system of `folder` cannot
    /// take another 64 KiB now (or is nearly full, after `dzsave` failed as a write does), else
    /// nil: asked of a probe file, as `ImageWriter.spaceProblem` asks of its temporary file.
    private static func spaceProblem(in folder: String, encoderSaid message: String?) -> Int32? {
        let probe = folder + "/.space-probe"
        let descriptor = open(probe, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return errno == ENOSPC || errno == EDQUOT ? errno : nil }
        defer {
            close(descriptor)
            unlink(probe)
        }
        return ImageWriter.spaceProblem(on: descriptor, encoderSaid: message)
    }
}

/// Linux calls Swift's Glibc module leaves out (it is built without `_GNU_SOURCE`), found in
/// the C library when first used. Where one is missing, its answer is ENOSYS, as the kernel's
/// would be.
private enum LinuxCalls {
    private typealias Renameat2 = @convention(c) (Int32, UnsafePointer<CChar>, Int32, UnsafePointer<CChar>, UInt32) -> Int32
    private typealias Syncfs = @convention(c) (Int32) -> Int32

    /// `renameat2`'s flags: fail if the target exists; exchange the two atomically.
    static let renameNoReplace: UInt32 = 1
    static let renameExchange: UInt32 = 2

    private static let renameat2: Renameat2? = symbol("renameat2")
    private static let syncfsCall: Syncfs? = symbol("syncfs")

    private static func symbol<Function>(_ name: String) -> Function? {
        guard let library = dlopen(nil, RTLD_NOW), let address = dlsym(library, name) else { return nil }
        return unsafeBitCast(address, to: Function.self)
    }

    /// `renameat2(2)` relative to the working folder; -1 with errno set on failure.
    static func rename(_ old: String, _ new: String, flags: UInt32) -> Int32 {
        guard let renameat2 else {
            errno = ENOSYS
            return -1
        }
        return renameat2(AT_FDCWD, old, AT_FDCWD, new, flags)
    }

    /// `syncfs(2)`: flushes the file system `descriptor` is on; falls back to `sync(2)`.
    static func syncfs(_ descriptor: Int32) -> Int32 {
        guard let syncfsCall else {
            sync()
            return 0
        }
        return syncfsCall(descriptor)
    }
}
