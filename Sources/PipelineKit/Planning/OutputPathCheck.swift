import Foundation

/// Checks each planned output path as the listings are planned (two outputs writing one path, a
/// file where a folder must be, an S3 output over its own input, paths that may meet once sizes
/// are known), and warns of folders the run may not write in. It keeps a digest of each path
/// and where its listing's record is, and reads the earlier listing back only to name it in a
/// problem.
struct OutputPathCheck {
    private let outputs: [OutputDefinition]
    /// Each planned path, by its bytes, and what writes it: the record of its listing and the
    /// output's index.
    private var writers: [PathDigest: (listing: Int64, output: Int)] = [:]
    private var folders = FolderCheck()
    private(set) var problems: [PipelineFileError.Problem] = []
    /// Folders the run may not write in: a warning, not a problem, as files already made there
    /// (a read-only volume a server answers from) need no writing.
    private(set) var warnings: [String] = []
    /// The folders of those warnings, each with the system's reason.
    private(set) var unwritableFolders: [UnwritableFolder] = []
    /// Each output's writer of files.
    private let outputWriters: [WriteCheck.Write.Writer]
    /// The folders tile pyramids replace whole, each with what makes it; empty when the file
    /// makes no pyramid, and then no folder is noted.
    private var pyramidFolders: [PathDigest: (listing: Int64, output: Int)] = [:]
    /// Each folder a planned file lies in, with the first such file and its writer: a pyramid
    /// whose folder is one of them would take that file away each time it is made.
    private var filledFolders: [PathDigest: (listing: Int64, output: Int, path: String)] = [:]
    private let makesPyramids: Bool
    /// Paths compared for a clash of sizes not known yet: kept here, and counted by the plan
    /// (`WorkCounter`) once, so that the counting stays out of the comparing.
    private(set) var pairsCompared = 0

    init(outputs: [OutputDefinition], outputWriters: [WriteCheck.Write.Writer]) {
        self.outputs = outputs
        self.outputWriters = outputWriters
        makesPyramids = outputs.contains { $0.tiles != nil }
    }

    /// Each output's writer of files: what writes them and where the pipeline file sets it.
    static func writers(of outputs: [OutputDefinition], roots: [String]) -> [WriteCheck.Write.Writer] {
        outputs.enumerated().map { index, output in
            // Where the pipeline file sets the path, for messages.
            .init(
                place: "outputs[\(output.fileIndex ?? index)].path", location: output.pathLocation, subject: output.name,
                root: roots[index],
                tiles: output.tiles)
        }
    }

    /// Checks the paths of one listing, whose targets are in the order of `outputs` and whose
    /// record is at `listing`; `name` gives the display name of the input whose record is at an
    /// offset, and `isInput` whether a path's digest is an input's key.
    mutating func check(
        _ targets: [OutputTarget], of input: InputFile, at listing: Int64, naming name: (Int64) -> String?,
        isInput: (PathDigest) -> Bool
    ) {
        // Paths that may meet once sizes are known differ only in digits: each output is
        // compared with the earlier ones of the same skeleton, so planning costs time in
        // proportion to the outputs (all with all grew with their square).
        var bySkeleton: [String: (all: [Int], unknown: [Int])] = [:]
        let patterns = targets.map(\.pattern)
        for (index, target) in targets.enumerated() where target.isMade {
            let place = outputWriters[index].place
            checkWhere(target, at: index, input: input, listing: listing, place: place, naming: name, isInput: isInput)
            if makesPyramids { checkPyramidFolders(target, at: index, input: input, listing: listing, place: place, naming: name) }
            checkSizesTellApart(
                target, at: index, among: targets, patterns: patterns, input: input, place: place, bySkeleton: &bySkeleton)
        }
    }

    /// The checks of one path as written: another output writing it, a file in the way of its
    /// folder, an S3 output over an input.
    private mutating func checkWhere(
        _ target: OutputTarget, at index: Int, input: InputFile, listing: Int64, place: String, naming name: (Int64) -> String?,
        isInput: (PathDigest) -> Bool
    ) {
        let output = outputs[index]
        // Paths still holding {width}/{height} are compared as written here, and with the other
        // outputs of the same input in `checkSizesTellApart`; the runner catches the rest when
        // the sizes are known.
        let digest = PathDigest(target.plannedPath)
        if let writer = writers[digest] {
            let otherName = name(writer.listing)
            let other = "output \"\(outputs[writer.output].name)\" of \(otherName ?? "an earlier input")"
            // Two URLs that differ only where they are hidden (a query value) are shown alike.
            let alike =
                writer.listing != listing && input.url != nil && otherName == input.displayName
                ? " (two inputs that differ only in what URLs show as …)" : ""
            problems.append(
                .init(
                    path: place, location: output.pathLocation,
                    message:
                        "output \"\(output.name)\" of \(input.displayName) and \(other)\(alike) would both write \(target.plannedPath)"))
        } else {
            writers[digest] = (listing, index)
        }
        // Found now, not after every input was decoded: a file where a folder must be, or a
        // folder the run may not write in.
        if !target.isInStore, let file = folders.fileInTheWay(of: target.plannedPath) {
            problems.append(
                .init(
                    path: place, location: output.pathLocation,
                    message:
                        "output \"\(output.name)\" of \(input.displayName) would write \(target.plannedPath), but \(file) is a file, not a folder"
                ))
        } else if !target.isInStore, let (folder, reason) = folders.unwritableFolder(of: target.plannedPath) {
            warnings.append(
                "\(place): output \"\(output.name)\" of \(input.displayName) would write \(target.plannedPath), "
                    + "but \(folder) cannot be written in (\(reason)): its files fail unless they are up to date")
            unwritableFolders.append(UnwritableFolder(folder: folder, reason: reason))
        }
        if target.isInStore, isInput(digest) {
            problems.append(
                .init(
                    path: place, location: output.pathLocation,
                    message:
                        "output \"\(output.name)\" of \(input.displayName) would overwrite the input \(target.plannedPath)"))
        }
    }

    /// A file planned inside the folder a tile pyramid replaces whole (a thumbnail in a IIIF
    /// pyramid's folder, a file in DeepZoom's `NAME_files`), in either order: each time the
    /// pyramid is made, the file would be gone, though the run said it was made.
    private mutating func checkPyramidFolders(
        _ target: OutputTarget, at index: Int, input: InputFile, listing: Int64, place: String, naming name: (Int64) -> String?
    ) {
        let output = outputs[index]
        let path = target.plannedPath
        let what = "output \"\(output.name)\" of \(input.displayName)"
        func writer(_ listing: Int64, _ output: Int) -> String {
            "output \"\(outputs[output].name)\" of \(name(listing) ?? "an earlier input")"
        }
        // The file's folders, nearest first, and the file itself unless it is a pyramid's own path.
        var folders: [String] = output.tiles == nil ? [path] : []
        var folder = (path as NSString).deletingLastPathComponent
        while !folder.isEmpty, folder != "/", folders.count < 4096 {
            folders.append(folder)
            folder = (folder as NSString).deletingLastPathComponent
        }
        for folder in folders {
            guard let pyramid = pyramidFolders[PathDigest(folder)] else { continue }
            problems.append(
                .init(
                    path: place, location: output.pathLocation,
                    message:
                        "\(what) would write \(path), in \(folder), which \(writer(pyramid.listing, pyramid.output)) replaces "
                        + "whole with its tiles each time it is made"))
            break
        }
        if let tiles = output.tiles {
            let replaced = tiles.layout.replacedFolder(ofPyramidAt: path)
            // DeepZoom's folder is not its path: a file planned at that very name is in its place.
            let planned =
                replaced == path ? nil : writers[PathDigest(replaced)].map { (listing: $0.listing, output: $0.output, path: replaced) }
            if let filled = filledFolders[PathDigest(replaced)] ?? planned {
                problems.append(
                    .init(
                        path: place, location: output.pathLocation,
                        message:
                            "\(what) would replace \(replaced) whole with its tiles each time it is made, where "
                            + "\(writer(filled.listing, filled.output)) writes \(filled.path)"))
            } else if let other = pyramidFolders[PathDigest(replaced)], other.listing != listing || other.output != index {
                // A folder layout's folder that is a DeepZoom pyramid's `NAME_files`: each would remove the other.
                problems.append(
                    .init(
                        path: place, location: output.pathLocation,
                        message:
                            "\(what) would replace \(replaced) whole with its tiles each time it is made, as "
                            + "\(writer(other.listing, other.output)) does with its own"))
            }
            pyramidFolders[PathDigest(replaced)] = pyramidFolders[PathDigest(replaced)] ?? (listing, index)
        }
        // The folders above, noted once: a folder noted has its own folders noted already.
        for folder in folders.dropFirst(output.tiles == nil ? 1 : 0) {
            guard filledFolders[PathDigest(folder)] == nil else { break }
            filledFolders[PathDigest(folder)] = (listing, index, path)
        }
    }

    /// Checks an input in an object store, whose address's digest is `digest`, against the outputs
    /// in stores planned before it: none may replace it.
    mutating func check(storedInput input: InputFile, digest: PathDigest, naming name: (Int64) -> String?) {
        guard let writer = writers[digest] else { return }
        let output = outputs[writer.output]
        problems.append(
            .init(
                path: outputWriters[writer.output].place, location: output.pathLocation,
                message:
                    "output \"\(output.name)\" of \(name(writer.listing) ?? "an earlier input") would overwrite the input \(input.path)"))
    }

    /// A size not known yet may turn out to be the one that makes two of one input's paths meet.
    private mutating func checkSizesTellApart(
        _ target: OutputTarget, at index: Int, among targets: [OutputTarget], patterns: [PathPattern], input: InputFile,
        place: String, bySkeleton: inout [String: (all: [Int], unknown: [Int])]
    ) {
        let output = outputs[index]
        let pattern = patterns[index]
        let skeleton = pattern.skeleton
        do {
            // Scoped: the group's arrays must have one owner again when appended to.
            let group = bySkeleton[skeleton] ?? ([], [])
            let candidates = pattern.hasUnknowns ? group.all : group.unknown
            pairsCompared += 1 + candidates.count
            for earlier in candidates {
                let other = targets[earlier]
                guard other.plannedPath != target.plannedPath, pattern.canMatch(patterns[earlier]) else { continue }
                // One output's widths never meet: each width made is a different number.
                if let group = output.variant?.group, outputs[earlier].variant?.group == group { continue }
                problems.append(
                    .init(
                        path: place, location: output.pathLocation,
                        message:
                            "outputs \"\(outputs[earlier].name)\" and \"\(output.name)\" of \(input.displayName) could both write "
                            + "\(target.plannedPath) and \(other.plannedPath): their steps do not fix the sizes that tell them apart"))
            }
        }
        bySkeleton[skeleton, default: ([], [])].all.append(index)
        if pattern.hasUnknowns { bySkeleton[skeleton, default: ([], [])].unknown.append(index) }
    }
}

/// A folder a plan's outputs would be written in that this process may not write in.
package struct UnwritableFolder: Sendable, Equatable {
    /// The folder, or the nearest existing one above it.
    package let folder: String
    /// Why, as the system says it (`Read-only file system`).
    package let reason: String
}
