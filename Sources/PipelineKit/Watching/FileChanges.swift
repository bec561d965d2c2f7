/// One batch of changes a `PipelineWatcher` saw: the files that were written, added, renamed or
/// removed, gathered until the folders went quiet.
public struct FileChanges: Sendable, Equatable {
    /// The absolute paths that changed, in the order first seen, each once. A new folder holding
    /// inputs counts as one path.
    public let paths: [String]
    /// Whether the kernel dropped events because too many came at once: anything may have
    /// changed, including the pipeline file.
    public let overflowed: Bool

    /// A batch of `paths`, flagged when the kernel dropped events.
    public init(paths: [String], overflowed: Bool = false) {
        self.paths = paths
        self.overflowed = overflowed
    }

    /// How many changes the batch holds (an overflow counts as one).
    public var count: Int { paths.count + (overflowed ? 1 : 0) }

    /// Whether `path` (absolute) is among the changes, or in a folder among them (one renamed
    /// into place, made or removed: the pipeline file's folder swapped for a new one), or may be
    /// after an overflow.
    public func mayInclude(_ path: String) -> Bool {
        overflowed || paths.contains { $0 == path || path.hasPrefix($0 == "/" ? "/" : $0 + "/") }
    }
}
