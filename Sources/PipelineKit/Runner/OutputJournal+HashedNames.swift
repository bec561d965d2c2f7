import Foundation

/// What a run did with the outputs whose template names them by `{hash}`: a changed input's new
/// file has a new name, so the file of the old name is left behind unless the run removes it.
struct HashedNames: Sendable {
    /// The planned paths (with `{hash}` unfilled) of which this run wrote or kept a file.
    var keys: Set<DiskPath> = []
    /// The files this run wrote or found up to date: never removed.
    var current: Set<DiskPath> = []
}

extension OutputJournal {
    /// Whether a planned path is named by its bytes: its `{hash}` is still unfilled.
    static func namesHash(_ planned: String) -> Bool { planned.contains("{hash") }

    /// Notes that the file at `path`, planned as `planned`, was found up to date.
    func noteCurrent(_ path: String, planned: String) {
        guard Self.namesHash(planned) else { return }
        state.withLock { state in
            state.hashed.keys.insert(DiskPath(planned))
            state.hashed.current.insert(DiskPath(path))
        }
    }

    /// Notes that the input of the planned path `planned` gets no file of it any more (a width
    /// its image is now too narrow for): an earlier run's `{hash}` file for it is of its older
    /// bytes, removed as a replaced one is.
    func noteNoLongerMade(planned: String) {
        guard Self.namesHash(planned) else { return }
        state.withLock { state in _ = state.hashed.keys.insert(DiskPath(planned)) }
    }

    /// Notes that this run wrote `path` for the planned path `key`.
    static func noteWritten(_ path: String, key: DiskPath, in state: inout State) {
        guard namesHash(key.path) else { return }
        state.hashed.keys.insert(key)
        state.hashed.current.insert(DiskPath(path))
    }

    /// Removes the files that earlier runs recorded for the planned paths with `{hash}` this run
    /// wrote or found up to date, when they are still the files the journal recorded (same size and time)
    /// and this run neither wrote nor kept them: only for a run that made or found every output
    /// of its inputs, as the runner decides. A journal read in part (a server's request) has
    /// read the records of those paths, as they are the ones it was read for. A file
    /// that another journal in this one's folder holds as its output's latest stays: another
    /// pipeline file writing `{hash}` names into the same folder gives the same bytes the same
    /// name, and its manifest and pages point at it. A file the run reads (`reads`: an input, an
    /// overlay named by its old hash) stays too, with a warning.
    /// - Returns: a warning for each file that could not be removed or was kept as read.
    func removeReplacedHashedFiles(keeping reads: ProtectedInputs) -> [String] {
        let replaced = state.withLock { state -> [String] in
            var paths: [String] = []
            for key in state.hashed.keys {
                guard let held = state.records[key] else { continue }
                for record in [held.last] + held.earlier {
                    let path = record.path(key: key)
                    guard !state.hashed.current.contains(DiskPath(path)), let stamp = Self.stamp(of: path), record.matches(stamp)
                    else { continue }
                    paths.append(path)
                }
            }
            return paths
        }
        guard !replaced.isEmpty else { return [] }
        let heldElsewhere = latestPathsOfOtherJournals()
        var warnings: [String] = []
        for path in Set(replaced).sorted() where !heldElsewhere.contains(DiskPath(path)) {
            if let read = reads.readFile(removing: path) {
                warnings.append("kept \(path), which a changed input's new {hash} file replaced: the run reads it, as \(read)")
            } else if unlink(path) != 0 && errno != ENOENT {
                warnings.append(
                    "cannot remove \(path), which a changed input's new {hash} file replaced: \(String(cString: strerror(errno)))")
            }
        }
        return warnings
    }

    /// The path of the latest record of each planned path in the other journals of this
    /// journal's folder (other pipeline files' sharing the cache folder).
    private func latestPathsOfOtherJournals() -> Set<DiskPath> {
        let folder = file.deletingLastPathComponent()
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder.path) else { return [] }
        var held: Set<DiskPath> = []
        for name in names where name.hasPrefix("journal-") && name.hasSuffix(".jsonl") && name != file.lastPathComponent {
            var latest: [DiskPath: String] = [:]
            _ = Self.read(folder.appendingPathComponent(name).path, naming: nil) { record in latest[record.key] = record.path }
            held.formUnion(latest.values.map(DiskPath.init))
        }
        return held
    }
}
