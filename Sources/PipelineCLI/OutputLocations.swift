import Foundation
import PipelineKit

/// Where a run's outputs went, for its summary: the one folder below the pipeline file's that
/// holds them all, or else the first output and how many there are.
struct OutputLocations {
    /// The pipeline file's folder, ending in "/": a folder that is this one or above it says
    /// nothing a user did not know.
    private let baseDirectory: String
    /// Outputs written or found up to date.
    private(set) var count = 0
    /// The first output reported.
    private(set) var first: String?
    /// The folders every output so far is in, outermost first (nil before the first).
    private var commonFolder: [Substring]?

    init(baseDirectory: URL) {
        let path = baseDirectory.standardizedFileURL.path
        self.baseDirectory = path.hasSuffix("/") ? path : path + "/"
    }

    mutating func add(_ path: String) {
        count += 1
        if first == nil { first = path }
        let folder = path.split(separator: "/", omittingEmptySubsequences: false).dropLast()
        guard let common = commonFolder else {
            commonFolder = Array(folder)
            return
        }
        commonFolder = Array(zip(common, folder).prefix { $0.0 == $0.1 }.map(\.0))
    }

    /// The folder that holds every output, ending in "/"; nil when there is none below the
    /// pipeline file's folder, or only a root (`/`, `s3://`).
    var folder: String? {
        guard let commonFolder, commonFolder.contains(where: { !$0.isEmpty && !$0.hasSuffix(":") }) else { return nil }
        let folder = commonFolder.joined(separator: "/") + "/"
        return baseDirectory.hasPrefix(folder) ? nil : folder
    }

    /// Where the outputs went, in words: `outputs in out/`, or `outputs: out/a.webp and 11 more`;
    /// nil when there are none.
    /// Paths under `directory` are shown relative to it.
    /// Control characters in the paths are escaped: a folder's name may not pass for a line.
    func summary(relativeTo directory: String = FileManager.default.currentDirectoryPath) -> String? {
        guard let first else { return nil }
        // The folder the command ran in, or one above it, says nothing either (`convert - a.webp`,
        // whose pipeline's folder is standard input's private one).
        let here = directory.hasSuffix("/") ? directory : directory + "/"
        if let folder, !here.hasPrefix(folder) {
            return "outputs in " + Self.shortened(folder, relativeTo: directory).escapingControlCharacters
        }
        return "outputs: " + Self.shortened(first, relativeTo: directory).escapingControlCharacters
            + (count > 1 ? " and \(count - 1) more" : "")
    }

    /// `path` relative to `directory` when it is inside it.
    static func shortened(_ path: String, relativeTo directory: String) -> String {
        let prefix = directory.hasSuffix("/") ? directory : directory + "/"
        // From the root, a relative path would read as one below the pipeline's folder.
        guard prefix != "/", path.hasPrefix(prefix), path.count > prefix.count else { return path }
        return String(path.dropFirst(prefix.count))
    }
}
