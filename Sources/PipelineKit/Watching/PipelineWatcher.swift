import Foundation
import Vips

/// Watches what a pipeline reads (its inputs' folders, its list files, the pipeline file and the
/// images its steps load) and delivers batches of changes as an `AsyncSequence`, debounced: a
/// burst of copies is one batch. Linux only (inotify).
///
/// ```swift
/// let watcher = try PipelineWatcher(pipelineFile: url, definition: pipeline.definition)
/// for await changes in watcher.changes {
///     for await event in try pipeline.run() { … }   // incremental: only what changed is made
/// }
/// ```
///
/// Changes that come while the consumer is busy (during a run) gather into the next batch. A
/// run's own writes (outputs, temporary files, the cache) are not changes. Remote inputs are not
/// watched. `stop()`, or cancelling the task that waits for a batch, ends the sequence.
public final class PipelineWatcher: Sendable {
    /// How changes are gathered into batches.
    public struct Debounce: Sendable {
        /// A batch is due once no change has come for this long.
        public var quietPeriod: Duration
        /// … or this long after its first change, so a folder that never goes quiet still runs.
        public var longestWait: Duration

        /// Batches that close after `quietPeriod` without a change, or `longestWait` after their first.
        public init(quietPeriod: Duration = .milliseconds(300), longestWait: Duration = .seconds(5)) {
            self.quietPeriod = quietPeriod
            self.longestWait = longestWait
        }
    }

    /// The batches of changes, one at a time. Meant for one consumer.
    public struct Changes: AsyncSequence, Sendable {
        /// One batch of changes.
        public typealias Element = FileChanges
        fileprivate let watcher: PipelineWatcher

        /// Waits for the next batch.
        public struct AsyncIterator: AsyncIteratorProtocol {
            fileprivate let watcher: PipelineWatcher

            /// The next batch; nil once the watcher has stopped.
            public mutating func next() async -> FileChanges? {
                await watcher.nextBatch()
            }
        }

        /// An iterator over the watcher's batches.
        public func makeAsyncIterator() -> AsyncIterator {
            AsyncIterator(watcher: watcher)
        }
    }

    /// What the consumer and the reading thread share, and the consumer waiting for a batch.
    private let state: WatcherRoom
    private let wakePipe: WakePipe
    private let pipelineFile: String

    /// Starts watching `definition`'s inputs, its list files, its steps' images and `pipelineFile`.
    /// Folders are watched when this returns: a change from then on is seen.
    ///
    /// With `watching` false, nothing is watched: the batches are only those
    /// `reportEverythingChanged()` asks for (`serve` on SIGHUP, where inotify cannot start).
    ///
    /// - Throws: `WatchError` when inotify cannot be started.
    public init(
        pipelineFile: URL, definition: PipelineDefinition, debounce: Debounce = Debounce(), watching: Bool = true
    ) throws(WatchError) {
        let file = InputEnumerator.normalize(pipelineFile.standardizedFileURL.path)
        let loop = try WatchLoop(definition: definition, pipelineFile: file, watching: watching)
        self.pipelineFile = file
        state = WatcherRoom(
            WatcherState(
                debouncer: ChangeDebouncer(quietPeriod: debounce.quietPeriod, longestWait: debounce.longestWait),
                watchedFolders: loop.folderCount, problems: loop.takeProblems()))
        wakePipe = loop.wakePipe
        let state = self.state
        // A thread of its own: it blocks in inotify for as long as the watcher lives, which would
        // hold a thread of Dispatch's pool or Swift's cooperative one for good.
        let thread = Thread { loop.run(state: state) }
        thread.name = "pipeline-watcher"
        thread.start()
    }

    deinit {
        stop()
    }

    /// The batches of changes.
    public var changes: Changes { Changes(watcher: self) }

    /// The pipeline file's absolute path, as it appears in `FileChanges.paths`.
    public var pipelineFilePath: String { pipelineFile }

    /// The absolute path `file` and those a change to it may come through when it is a symbolic
    /// link (the file the link names, a folder link on the way): the paths `changes` name for a
    /// change to what `file` reads as.
    public static func changePaths(of file: String) -> [String] {
        WatchScope.linkedPaths(InputEnumerator.normalize(file))
    }

    /// How many folders are watched now.
    public var watchedFolderCount: Int { state.withLock { state, _ in state.watchedFolders } }

    /// Folders that could not be watched since the last call (the inotify watch limit, say).
    public func takeProblems() -> [String] {
        state.withLock { state, _ in
            defer { state.problems = [] }
            return state.problems
        }
    }

    /// Watches what `definition` reads from now on (after the pipeline file changed). While the
    /// pipeline file fails, what may mend it is watched too: what `failed` reads (the file as it
    /// is now, when it loads but does not plan: a glob naming a folder not made yet), and
    /// `filesAtFault`, the files its problems are about (an overlay not in place yet).
    public func watch(_ definition: PipelineDefinition, awaiting failed: PipelineDefinition? = nil, filesAtFault: [String] = []) {
        let watched = WatchedPipeline(definition: definition, failed: failed, filesAtFault: filesAtFault.map(InputEnumerator.normalize))
        state.withLock { state, _ in state.newPipeline = watched }
        wakePipe.signal()
    }

    /// The paths among `changes` that may change what `definition` reads: its inputs, the folders
    /// that may hold them and the files its outputs are made with. All of them after an overflow.
    /// While the pipeline file fails, the rest concern only what may mend it.
    public func paths(in changes: FileChanges, readBy definition: PipelineDefinition) -> [String] {
        if changes.overflowed { return changes.paths }
        let scope = WatchScope(definition: definition, pipelineFile: pipelineFile)
        return changes.paths.filter(scope.mayChangeTargets)
    }

    /// Reports everything as changed, as after an overflow of the kernel's events: the next
    /// batch makes its consumer read the pipeline file and its inputs again (`serve` on SIGHUP).
    public func reportEverythingChanged() {
        state.withLock { state, _ in state.debouncer.recordOverflow(at: .now) }
        wakePipe.signal()
    }

    /// Stops watching; the sequence of changes ends. Safe from any thread, at any time.
    public func stop() {
        state.withLock { state, waiters in
            state.stopped = true
            waiters.letOutAll(with: nil)
        }
        wakePipe.signal()
    }

    /// The next due batch: at once when one is due already, else when it becomes due.
    fileprivate func nextBatch() async -> FileChanges? {
        // Cancelling stops the watcher, which lets the consumer out with no batch.
        await withTaskCancellationHandler {
            await state.wait(()) { state, waiters in
                if state.stopped {
                    waiters.letOutAll(with: nil)
                } else if let batch = state.takeBatchIfDue() {
                    waiters.letOutAll(with: batch)
                } else {
                    // The reading thread now has a consumer to time a batch for.
                    wakePipe.signal()
                }
            }
        } onCancel: {
            stop()
        }
    }
}

/// The reading thread's side of a watcher: the inotify instance, the folders it watches and the
/// scope deciding what matters. Handed to that thread at start and touched by it alone, which is
/// why it may be `@unchecked Sendable`.
private final class WatchLoop: @unchecked Sendable {
    private let inotify: Inotify
    private var watched: WatchedPipeline
    private let pipelineFile: String
    /// What matters now: made from the definitions and the list files' entries as they are.
    private var scope: WatchScopes
    private var folderByWatch: [Int32: String] = [:]
    private var watchByFolder: [String: Int32] = [:]
    private var problems: [String] = []
    /// Folders already reported as unwatchable, so each is reported once.
    private var reported: Set<String> = []

    var wakePipe: WakePipe { inotify.wakePipe }
    var folderCount: Int { watchByFolder.count }

    init(definition: PipelineDefinition, pipelineFile: String, watching: Bool) throws(WatchError) {
        inotify = try Inotify(watching: watching)
        watched = WatchedPipeline(definition: definition)
        self.pipelineFile = pipelineFile
        scope = watched.scopes(pipelineFile: pipelineFile)
        synchronize()
    }

    func takeProblems() -> [String] {
        defer { problems = [] }
        return problems
    }

    /// Reads events until the watcher stops, recording those that matter and handing due
    /// batches to a waiting consumer. A failure to read ends the sequence, with the reason kept.
    func run(state: WatcherRoom) {
        while true {
            let (stopped, timeout, newPipeline) = state.withLock { state, waiters -> (Bool, Duration?, WatchedPipeline?) in
                defer { state.newPipeline = nil }
                // Timed only while a consumer waits; a batch gathered during a run waits for the
                // consumer to ask, and goes on gathering meanwhile.
                let timeout = waiters.isEmpty ? nil : state.debouncer.dueTime.map { $0 - .now }
                return (state.stopped, timeout, state.newPipeline)
            }
            if stopped { break }
            if let newPipeline {
                watched = newPipeline
                scope = watched.scopes(pipelineFile: pipelineFile)
                let watchedBefore = Set(watchByFolder.keys)
                synchronize()
                // What mends a failed file may have come while it was read, before its folders
                // were watched: looked for in them now, among what changed since the consumer
                // took its last batch (what was there before is what the file failed with).
                if watched.isAwaiting {
                    let now = ContinuousClock.now
                    let since = state.withLock { state, _ in state.lastBatchTaken }
                    let arrived = watchByFolder.keys.filter {
                        !watchedBefore.contains($0) && scope.holdsRelevantEntries(directory: $0, changedSince: since)
                    }
                    state.withLock { state, _ in for folder in arrived { state.debouncer.record(folder, at: now) } }
                }
                publish(to: state)
                // The wait is timed again: a change recorded here is due in a quiet period.
                continue
            }
            let events: [Inotify.Event]
            do {
                events = try inotify.wait(timeout: timeout)
            } catch {
                state.withLock { state, _ in state.problems.append(error.description) }
                break
            }
            let now = ContinuousClock.now
            let changed = relevantChanges(in: events)
            state.withLock { state, waiters in
                for path in changed.paths { state.debouncer.record(path, at: now) }
                if changed.overflowed { state.debouncer.recordOverflow(at: now) }
                guard !waiters.isEmpty, let batch = state.takeBatchIfDue() else { return }
                waiters.letOutFirst(with: batch)
            }
            if changed.resynchronized { publish(to: state) }
        }
        state.withLock { state, waiters in
            state.stopped = true
            waiters.letOutAll(with: nil)
        }
    }

    private func publish(to state: WatcherRoom) {
        let count = folderCount, problems = takeProblems()
        state.withLock { state, _ in
            state.watchedFolders = count
            state.problems += problems
        }
    }

    /// The changes that matter among `events`; folders come and go from the watch as they do on disk.
    private func relevantChanges(in events: [Inotify.Event]) -> (paths: [String], overflowed: Bool, resynchronized: Bool) {
        var paths: [String] = []
        var overflowed = false
        var newFolders: [String] = []
        var needsSync = false
        for event in events {
            if event.has(IN_Q_OVERFLOW) {
                overflowed = true
                needsSync = true
                continue
            }
            if event.has(IN_IGNORED) {
                // The folder is gone (or its watch removed): forget it; a sync may watch its successor.
                if let folder = folderByWatch.removeValue(forKey: event.watch), watchByFolder[folder] == event.watch {
                    watchByFolder[folder] = nil
                }
                needsSync = true
                continue
            }
            guard let folder = folderByWatch[event.watch], !event.name.isEmpty else { continue }
            let path = folder == "/" ? "/" + event.name : folder + "/" + event.name
            if event.isDirectory {
                if event.has(IN_CREATE) || event.has(IN_MOVED_TO) {
                    newFolders.append(path)
                    needsSync = true
                } else if event.has(IN_DELETE) || event.has(IN_MOVED_FROM) {
                    needsSync = true
                    if scope.mayHoldTargets(directory: path) { paths.append(path) }
                } else if event.has(IN_ATTRIB), reported.remove(path) != nil {
                    // A folder that could not be watched (not readable) may be now.
                    newFolders.append(path)
                    needsSync = true
                } else if event.has(IN_ATTRIB), scope.mayHoldTargets(directory: path) {
                    // Its permissions changed: a run skipped it while it could not be read, or
                    // cannot read it now.
                    paths.append(path)
                }
                continue
            }
            // A link that is a watched folder's path (an input folder released by pointing the
            // link elsewhere) names another folder now, and the inputs named through it other files.
            if watchByFolder[path] != nil {
                newFolders.append(path)
                needsSync = true
                if scope.mayHoldTargets(directory: path) { paths.append(path) }
                continue
            }
            // A symbolic link to a folder, new here, is a folder arriving: one a glob, a list or a
            // step's file may be read through. One the targets name is a change itself: Kubernetes'
            // `..data`, renamed over the old one above a mounted pipeline file.
            if event.has(IN_CREATE) || event.has(IN_MOVED_TO), WatchScope.isSymbolicLink(path),
                WatchScope.isDirectory(path, followLinks: true)
            {
                newFolders.append(path)
                needsSync = true
                if scope.isRelevant(file: path) { paths.append(path) }
                continue
            }
            // A new file is a change once it is closed after writing (or renamed in): a run that
            // started at its creation could read it half-written. A new symbolic link is whole,
            // and so is a new hard link to a file (`ln`, `cp -l`).
            if event.has(IN_CREATE), !WatchScope.isSymbolicLink(path), !Self.isHardLink(path) { continue }
            if scope.isRelevant(file: path) { paths.append(path) }
        }
        // A list file read anew may name other files and folders; a link in an input folder
        // that came or went, another file to watch.
        if overflowed
            || paths.contains(where: { scope.remakesScope(after: $0) || WatchScope.isSymbolicLink($0) })
        {
            scope = watched.scopes(pipelineFile: pipelineFile)
            needsSync = true
        }
        if needsSync { synchronize() }
        // Looked into after they are watched: a file put there since is an event, one put there
        // before is found here. One that could not be watched (the watch limit) is a change: its
        // run makes what it holds by then, and says why later changes in it go unseen.
        let unwatched = newFolders.filter { watchByFolder[$0] == nil && scope.mayHoldTargets(directory: $0) }
        paths += newFolders.filter { scope.holdsRelevantFiles(directory: $0) || unwatched.contains($0) }
        return (paths, overflowed, needsSync)
    }

    /// Whether `path` is a regular file with more than one name: a hard link made to a whole file.
    private static func isHardLink(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFREG && info.st_nlink > 1
    }

    /// Watches the folders the scope needs now and no others (none, without inotify).
    private func synchronize() {
        guard inotify.isWatching else { return }
        let wanted = scope.directoriesToWatch()
        // Removed first: a folder renamed within the watched tree keeps its watch number, which
        // the add below then claims for its new path.
        for (folder, watch) in watchByFolder where !wanted.contains(folder) || !WatchScope.isDirectory(folder, followLinks: true) {
            inotify.remove(watch)
            watchByFolder[folder] = nil
            folderByWatch[watch] = nil
        }
        // Every wanted folder is asked for again: the watch number says which folder its path
        // names now. A folder swapped for another by two renames, or a link pointed elsewhere,
        // keeps its path but not its number, and the old folder's watch goes.
        for folder in wanted.sorted() {
            switch inotify.add(folder) {
            case .success(let watch):
                if let old = watchByFolder[folder], old != watch, folderByWatch[old] == folder {
                    inotify.remove(old)
                    folderByWatch[old] = nil
                }
                if let previous = folderByWatch[watch], previous != folder { watchByFolder[previous] = nil }
                folderByWatch[watch] = folder
                watchByFolder[folder] = watch
            case .failure(let error):
                if reported.insert(folder).inserted { problems.append(error.description) }
            }
        }
    }

}
