import Foundation

/// A tile pyramid replaces a whole folder each time it is made (DeepZoom's `NAME_files`, a IIIF,
/// Zoomify or Google folder): whatever the run reads in it would go with the old tiles.
extension WriteCheck {
    /// A problem for each input and other file read (`reads`) that lies in one of `folders` (real
    /// paths, each with the pyramid's write that replaces it), by where it is named and by where
    /// a link there leads. Inputs are read back from `plan` only when there is a pyramid.
    mutating func readsReplaced(
        with folders: [String: Write], reads: [ReadFile], plan: SpillFile.Reader
    ) -> [PipelineFileError.Problem] {
        guard !folders.isEmpty else { return [] }
        let inputs = inputsByIdentity.values.sorted().lazy.compactMap { offset in
            SourceStore.input(at: offset, in: plan).map { (what: "the input \($0.displayName)", path: $0.path) }
        }
        var problems: [PipelineFileError.Problem] = []
        for read in reads.map({ (what: $0.what, path: $0.path) }) + inputs {
            // The folder resolved (and kept: inputs share few folders), the file itself not kept.
            let named = resolve((read.path as NSString).deletingLastPathComponent) + "/" + (read.path as NSString).lastPathComponent
            guard
                let (folder, write) = Self.folder(holding: named, among: folders)
                    ?? Self.realPath(read.path).flatMap({ Self.folder(holding: $0, among: folders) })
            else { continue }
            problems.append(
                .init(
                    path: write.place, location: write.location,
                    message: "\(write.what) would replace the folder \(folder) whole, and \(read.what) is in it: "
                        + "nothing may write where the run reads"))
        }
        return problems
    }

    /// The folder among `folders` that `path` lies in, at any depth, with its write.
    static func folder(holding path: String, among folders: [String: Write]) -> (String, Write)? {
        var folder = (path as NSString).deletingLastPathComponent
        // Bounded by the path's depth: each pass takes off one component.
        while folder.count > 1 {
            if let write = folders[folder] { return (folder, write) }
            folder = (folder as NSString).deletingLastPathComponent
        }
        return nil
    }
}
