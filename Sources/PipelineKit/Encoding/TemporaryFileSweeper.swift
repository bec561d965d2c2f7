import Foundation

/// Removes the temporary files a killed run left in the folders a run is about to write to,
/// and the temporary folders of its tile pyramids.
///
/// `ImageWriter` names each temporary file `.<name>.pipeline-tmp-<pid>-<machine>-<start>-<random>`.
/// A file with that marker, written on this machine, is removed when it is older than the sweep
/// and the process that wrote it is gone: a run still writing (in this process or another one
/// here) keeps its files. A process with the writer's id that started at another time is
/// another process: a restarted container's first process is PID 1 again. A file another machine (or container, or an earlier boot) wrote, in a
/// folder they share, cannot be asked about: it is removed once nothing has written to it for
/// `foreignIdleTime`, far longer than a write pauses. (A pyramid's temporary folder changes only
/// when its top-level entries do, so another machine's pyramid that takes longer than that to
/// write may be removed under it.) Were a live one removed all the same, its
/// write would fail with a clear error, never leave a partial output.
package enum TemporaryFileSweeper {
    /// Sweeps the folder of every output the plan will write, off the cooperative pool (the
    /// runner calls it on a stage queue). Failures to list or remove are ignored: a folder that
    /// cannot be read or written fails its items with a clear error later, at encode.
    /// - Returns: the paths removed.
    @discardableResult
    static func sweep(_ plan: RunPlan, now: Date = Date()) -> [String] {
        folders(of: plan).flatMap { sweep(folder: $0.path, depth: $0.depth, olderThan: now) }
    }

    /// The folders the plan writes to, each with how many levels below it to sweep too. A
    /// folder whose name waits for `{width}` or `{height}` is not known yet: its nearest known
    /// ancestor is swept down to the template's depth.
    static func folders(of plan: RunPlan) -> [(path: String, depth: Int)] {
        var deepest: [String: Int] = [:]
        // S3 objects are PUT whole: they leave no temporary files.
        // Walked in place, not flattened: a plan of many inputs would be copied whole.
        for item in plan.items {
            for listing in item.listings {
                for target in listing.targets where target.isMade && !target.isInStore { add(folderOf: target.plannedPath, to: &deepest) }
            }
        }
        return deepest.sorted { $0.key < $1.key }.map { (path: $0.key, depth: $0.value) }
    }

    /// Notes the folder of `path` in `deepest`: the folder itself, or its nearest known ancestor
    /// with the depth below it when its name waits for a size.
    private static func add(folderOf path: String, to deepest: inout [String: Int]) {
        let folder = (path as NSString).deletingLastPathComponent
        // Most folders hold no unknown size: searching each for one would cost every output of every input.
        let unfilled =
            folder.utf8.contains(UInt8(ascii: "{"))
            ? ["{width}", "{height}"].compactMap { folder.range(of: $0)?.lowerBound }.min() : nil
        guard let unfilled else {
            deepest[folder] = max(deepest[folder] ?? 0, 0)
            return
        }
        let known = folder[..<unfilled]
        let slash = known.range(of: "/", options: .backwards)?.lowerBound ?? known.startIndex
        let ancestor = slash == known.startIndex ? "/" : String(known[..<slash])
        let depth = folder[slash...].split(separator: "/").count
        deepest[ancestor] = max(deepest[ancestor] ?? 0, depth)
    }

    /// Removes the leftovers in `folder` and, `depth` levels down, in its subfolders.
    /// Only entries whose names `named` accepts are looked at, folders among them.
    static func sweep(folder: String, depth: Int, olderThan start: Date, named: (String) -> Bool = { _ in true }) -> [String] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return [] }
        var removed: [String] = []
        for name in names where named(name) {
            let path = folder == "/" ? "/" + name : folder + "/" + name
            var info = stat()
            guard lstat(path, &info) == 0 else { continue }
            let kind = info.st_mode & S_IFMT
            if kind == S_IFDIR {
                // A tile pyramid's temporary folder (`TilePyramidWriter`), named as files are.
                if isLeftover(name: name, modified: info.st_mtim, before: start) {
                    TilePyramidWriter.removeTree(path)
                    if lstat(path, &info) != 0 { removed.append(path) }
                    continue
                }
                // Not through symbolic links (lstat): they may lead outside the output folders.
                if depth > 0 { removed += sweep(folder: path, depth: depth - 1, olderThan: start, named: named) }
                continue
            }
            guard kind == S_IFREG, isLeftover(name: name, modified: info.st_mtim, before: start) else { continue }
            if unlink(path) == 0 { removed.append(path) }
        }
        return removed
    }

    /// Removes from `folder` the leftovers of earlier writes of the file `name` (its temporary
    /// files, `ImageWriter.temporaryName(for: name)`, of processes that are gone).
    @discardableResult
    static func sweepLeftovers(of name: String, in folder: String, now: Date = Date()) -> [String] {
        let prefix = "." + name + ImageWriter.temporaryMarker
        return sweep(folder: folder, depth: 0, olderThan: now) { $0.hasPrefix(prefix) }
    }

    /// How long a temporary file written on another machine must have gone unwritten before a
    /// sweep removes it.
    static let foreignIdleTime: TimeInterval = 3600

    /// Whether `name` is a temporary file of a process that is gone, last written before `start`.
    static func isLeftover(name: String, modified: timespec, before start: Date, machineTag: String = ImageWriter.machineTag) -> Bool {
        guard name.hasPrefix("."), let marker = name.range(of: ImageWriter.temporaryMarker, options: .backwards) else { return false }
        let modifiedAt = Double(modified.tv_sec) + Double(modified.tv_nsec) / 1e9
        guard modifiedAt < start.timeIntervalSince1970 else { return false }
        // "<pid>-<machine>-<start>-<random>"; before writers recorded their start,
        // "<pid>-<machine>-<random>"; before they recorded their machine, "<pid>-<random>" (taken
        // to be this machine's); and before that "<random>", with no owner to ask about.
        let parts = name[marker.upperBound...].split(separator: "-")
        guard parts.count >= 2, let pid = pid_t(parts[0]), pid > 0 else { return true }
        if parts.count >= 3, parts[1] != machineTag {
            return modifiedAt < start.timeIntervalSince1970 - foreignIdleTime
        }
        return !isRunning(pid, startedAt: parts.count >= 4 ? String(parts[2]) : nil)
    }

    /// What names this process among those that leave files behind: its id, its machine's tag
    /// and when it started (`<pid>-<machine>-<start>`).
    package static let ownerTag = "\(getpid())-\(ImageWriter.machineTag)-\(ImageWriter.processStart)"

    /// Whether `tag`, another process's `ownerTag`, names a process of this machine that is
    /// gone: what it left may go. A tag of another machine, or not a tag, is no such process.
    package static func ownerIsGone(_ tag: some StringProtocol) -> Bool {
        let parts = tag.split(separator: "-")
        guard parts.count == 3, let pid = pid_t(parts[0]), pid > 0, parts[1] == ImageWriter.machineTag else { return false }
        return !isRunning(pid, startedAt: String(parts[2]))
    }

    /// Whether process `pid` is still going, and, when `start` is given, is the one that
    /// started then rather than a later one given the same id.
    static func isRunning(_ pid: pid_t, startedAt start: String? = nil) -> Bool {
        if let start, let running = startTime(of: pid), running != start { return false }
        if pid == getpid() { return true }
        // Signal 0 checks existence only; EPERM means it exists but belongs to someone else.
        guard kill(pid, 0) == 0 || errno == EPERM else { return false }
        // A killed process stays a zombie until its parent reaps it, which a container's first
        // process may never do (or `timeout -s KILL`, killed with it): it writes nothing more.
        return !isZombie(pid)
    }

    /// Whether `pid` has ended and waits to be reaped: its state in `/proc/PID/stat` is `Z`
    /// (or `X`, dead).
    private static func isZombie(_ pid: pid_t) -> Bool {
        let state = statFields(of: pid)?.first
        return state == "Z" || state == "X"
    }

    /// When process `pid` started, in clock ticks after boot (`/proc/PID/stat`'s 22nd field);
    /// nil when there is no such process or no `/proc`.
    static func startTime(of pid: pid_t) -> String? {
        guard let fields = statFields(of: pid), fields.count > 19 else { return nil }
        return String(fields[19])
    }

    /// The fields of `/proc/PID/stat` after the name in parentheses (which may hold any
    /// character): the process's state first.
    private static func statFields(of pid: pid_t) -> [Substring]? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let nameEnd = stat.range(of: ")", options: .backwards)
        else { return nil }
        return stat[nameEnd.upperBound...].split(separator: " ")
    }
}
