import Foundation

/// What a watcher watches for: the pipeline that runs and, while the pipeline file fails, what
/// may mend the file.
struct WatchedPipeline: Sendable {
    /// The pipeline that runs: the last valid one.
    var definition: PipelineDefinition
    /// The pipeline file as it is now, when it loads but does not plan.
    var failed: PipelineDefinition?
    /// The files the failing pipeline file's problems are about, absolute.
    var filesAtFault: [String] = []

    /// Whether a failed pipeline file is waited on: what it reads, or files it is about.
    var isAwaiting: Bool { failed != nil || !filesAtFault.isEmpty }

    /// The scopes these make, as the file system and the list files are now.
    func scopes(pipelineFile: String) -> WatchScopes {
        var running = WatchScope(definition: definition, pipelineFile: pipelineFile)
        running.add(files: filesAtFault)
        return WatchScopes(running: running, awaited: failed.map { WatchScope(definition: $0, pipelineFile: pipelineFile) })
    }
}

/// The scope of the pipeline that runs and, while the pipeline file loads but does not plan, the
/// scope of the file as it is now: a change that either cares about is a change. The runs are
/// the running pipeline's, so what they write is a change to neither.
struct WatchScopes {
    let running: WatchScope
    let awaited: WatchScope?

    /// Whether a change to the file at `path` matters.
    func isRelevant(file path: String) -> Bool {
        if running.isRelevant(file: path) { return true }
        guard let awaited else { return false }
        return awaited.isRelevant(file: path) && !running.isWrittenByRuns(path)
    }

    /// Whether a folder at `path` may hold a target of either scope.
    func mayHoldTargets(directory path: String) -> Bool {
        if running.mayHoldTargets(directory: path) { return true }
        guard let awaited else { return false }
        return awaited.mayHoldTargets(directory: path) && !running.isWrittenByRuns(path, isFolder: true)
    }

    /// Whether the folder at `path`, new to the watcher, holds a file that matters.
    func holdsRelevantFiles(directory path: String) -> Bool {
        if running.holdsRelevantFiles(directory: path) { return true }
        guard let awaited, !running.isWrittenByRuns(path, isFolder: true) else { return false }
        return awaited.holdsRelevantFiles(directory: path)
    }

    /// Whether the folder at `path` has an entry that matters whose status changed (made, renamed
    /// in, written) since `date`, not looking below it: a folder watched as the stand-in for one
    /// not made yet (`/`, say) is not walked.
    func holdsRelevantEntries(directory path: String, changedSince date: Date) -> Bool {
        // File times are kept at the kernel's coarse clock, a few milliseconds behind.
        let since = date.timeIntervalSince1970 - 0.05
        return LongPath.listing(of: path).names.contains { name in
            let file = path == "/" ? "/" + name : path + "/" + name
            var status = stat()
            guard lstat(file, &status) == 0 else { return false }
            let changed = Double(status.st_ctim.tv_sec) + Double(status.st_ctim.tv_nsec) / 1e9
            return changed >= since && isRelevant(file: file)
        }
    }

    /// Whether a change to `path` (a list file, an input that is a symbolic link) changes what
    /// the scopes name, so they are made again.
    func remakesScope(after path: String) -> Bool {
        [running, awaited].contains { $0.map { $0.listFiles.contains(path) || $0.linkedInputs.contains(path) } ?? false }
    }

    /// Every folder either scope needs watched now.
    func directoriesToWatch() -> Set<String> {
        running.directoriesToWatch().union(awaited?.directoriesToWatch() ?? [])
    }
}
