import Foundation

/// A watcher's state, and its consumer waiting for a batch (nil: the watcher stopped).
typealias WatcherRoom = WaitingRoom<WatcherState, Void, FileChanges?>

/// What a watcher's consumer and its reading thread share, behind its lock.
struct WatcherState: Sendable {
    var debouncer: ChangeDebouncer
    /// When the consumer last took a batch (at first, when watching began): a pipeline file it
    /// then read was read after this.
    var lastBatchTaken = Date()
    /// What to watch from now on (the pipeline changed), for the reading thread to pick up.
    var newPipeline: WatchedPipeline?
    var stopped = false
    var watchedFolders = 0
    var problems: [String] = []
}

extension WatcherState {
    /// The batch due now, if one is, noting when it was taken.
    mutating func takeBatchIfDue() -> FileChanges? {
        guard let batch = debouncer.takeIfDue(at: .now) else { return nil }
        lastBatchTaken = Date()
        return batch
    }
}
