import Foundation
import Vips

/// The record of outputs written, for incremental runs: for each output path, a fingerprint of
/// what made it (the input's version, the output's steps and encoder, the decode settings, the
/// tool's version) and the file's size and modification time when written.
///
/// Records are found by the output's planned path: a path whose template has `{width}` or
/// `{height}` is known only once the image is made, so its record also holds the path as planned
/// (placeholders unfilled), and the next run finds it from the plan alone. The size it will have
/// is not predicted: the fingerprint fixes the input and every setting, so the file it names is the
/// one this run would write.
///
/// It is an append-only file of JSON lines, one line appended only after its output was renamed
/// into place: a killed run can lose the last lines (those outputs are made again) but never
/// records an output that was not written.
///
/// Several runs may write it at once (two runs of one file, or two files of one name in one
/// folder). Every append and every rewrite holds an exclusive `flock` on the file; an appender
/// whose file was replaced by another's rewrite reopens it, and a rewrite reads the file again
/// under the lock, so no run's records are lost. Two runs may write one output in turn: every
/// record of a path read from the file is kept and the one that matches the file on disk counts,
/// whichever run appended last.
///
/// A damaged line (a torn tail after a crash or a full disk, garbage) is skipped with a warning,
/// the next record starts on a fresh line, and the run rewrites the journal without it. A line
/// without its newline is damaged too: every record is written with its newline in one write(2),
/// so an unterminated one was cut short. An append that fails (a full disk) is cut off the file
/// again, so no part of it is read as a record, and the failure is one of `finish()`'s warnings:
/// the outputs it would have recorded are made again next run.
package final class OutputJournal: Sendable {
    struct Record: Codable, Sendable, Equatable {
        let path: String
        let fingerprint: String
        let size: Int64
        let modified: String
        let width: Int
        let height: Int
        /// The path as planned, with `{width}`/`{height}` unfilled, when it differs from `path`.
        var planned: String? = nil
        /// The quality a quality target's search chose, the file's score, and the score it
        /// searched for, when searched.
        var quality: Int? = nil
        var score: Double? = nil
        var target: Double? = nil
        /// The bytes written, when they are not the size of the file at `path`: a tile
        /// pyramid's tiles and descriptor, beside which its descriptor or folder is small.
        var bytes: Int64? = nil
        /// A remote input's upright size (`WIDTHxHEIGHT`), which a run that finds the file up
        /// to date does not fetch to learn.
        var source: String? = nil
        /// The fingerprint the file was made with, where `fingerprint` is another width's that
        /// found the file its own (after a `trim`): the file's one tag, whichever width names it.
        var tag: String? = nil

        /// What the record is found by: the path as planned.
        var key: DiskPath { DiskPath(planned ?? path) }
    }

    /// Every record of one planned path: the last one read inline, since most paths have one.
    struct HeldRecords {
        var last: Held
        /// The earlier ones, oldest first.
        var earlier: [Held] = []

        var count: Int { 1 + earlier.count }

        mutating func add(_ held: Held) {
            earlier.append(last)
            last = held
        }
    }

    struct State {
        /// Every record of each planned path read from the file.
        var records: [DiskPath: HeldRecords]
        /// Lines in the file as far as this run knows: read, then appended.
        var lines: Int
        /// The distinct planned paths the file had when read.
        var plannedPathsInFile: Int
        /// Paths this run recorded that `records` did not hold: counted, not kept, so that the
        /// journal holds nothing per output made (the file has them). `records` holds every
        /// record of a planned path that the file has, even when only some paths were read.
        var newPaths = 0
        /// Lines that were not records when the file was read.
        var damaged: Int
        /// Open for appending once the first record is written, else -1.
        var descriptor: Int32
        /// The first reason the journal could not be written, with the file's path.
        var problem: String? = nil
        /// Records of outputs made that could not be written.
        var unrecorded = 0
        /// Why the journal could not be opened or locked, the last time it could not.
        var openFailure: String?
        /// What the run did with outputs named by `{hash}` (`OutputJournal+HashedNames`).
        var hashed = HashedNames()
    }

    let file: URL
    /// What was wrong with the journal when it was read, for the run's warnings.
    let warnings: [String]
    let fingerprints: Fingerprints
    let state: Locked<State>

    /// The journal at `file` of the run of `definition`. A run of part of a plan (a server's, for
    /// a request) gives its outputs' planned paths as `plannedPaths`: only their records are read,
    /// and a line naming none of them is passed over undecoded, its planned path counted.
    init(file: URL, definition: PipelineDefinition, plannedPaths: [String]? = nil) {
        self.file = file
        fingerprints = Fingerprints(definition: definition)
        var records: [DiskPath: HeldRecords] = [:]
        let wanted = plannedPaths.map { paths in paths.compactMap { try? JSONEncoder().encode($0) }.map([UInt8].init) }
        let counts = Self.read(file.path, naming: wanted) { record in
            let held = Held(record)
            if records[record.key]?.add(held) == nil { records[record.key] = HeldRecords(last: held) }
        }
        let damaged = counts.damaged
        warnings =
            damaged == 0
            ? []
            : [
                "the journal \(file.path) has \(damaged) damaged line\(damaged == 1 ? "" : "s") "
                    + "(a run stopped while writing it, or a full disk): skipped, and the outputs they recorded are made again"
            ]
        state = Locked(
            State(
                records: records, lines: counts.lines,
                plannedPathsInFile: plannedPaths == nil ? records.count : counts.plannedPaths, damaged: damaged, descriptor: -1))
    }

    /// The record of the output planned at `planned` when the file it wrote is still the one
    /// written with `fingerprint`.
    func upToDate(_ planned: String, fingerprint: String) -> Record? {
        let key = DiskPath(planned)
        guard let held = state.withLock({ $0.records[key] }) else { return nil }
        for candidate in [held.last] + held.earlier.reversed() where candidate.isMade(with: fingerprint) {
            guard let stamp = Self.stamp(of: candidate.path(key: key)), candidate.matches(stamp) else { continue }
            noteCurrent(candidate.path(key: key), planned: planned)
            return candidate.record(key: key)
        }
        return nil
    }

    /// Records held in memory: those read when the journal was opened. What the run records
    /// goes to the file only, so this does not grow with the outputs made.
    var recordsInMemory: Int {
        state.withLock { $0.records.values.reduce(0) { $0 + $1.count } }
    }

    /// Notes that `path`, planned as `planned`, was written with `fingerprint` (called after the
    /// rename); `bytes` are those written, which a tile pyramid has beside `path`; `committed`
    /// is the file as the run put it there, when known, else what is at `path` now.
    func recordWritten(
        _ path: String, planned: String, fingerprint: String, size: ImageSize, bytes: Int? = nil, searched: SearchedQuality? = nil,
        committed: FileStamp? = nil, source: ImageSize? = nil, tag: String? = nil
    ) {
        guard let stamp = committed ?? Self.stamp(of: path) else { return }
        let record = Record(
            path: path, fingerprint: fingerprint, size: stamp.size,
            modified: Self.text(seconds: stamp.seconds, nanoseconds: stamp.nanoseconds),
            width: size.width,
            height: size.height,
            planned: planned == path ? nil : planned, quality: searched?.quality, score: searched?.score, target: searched?.target,
            bytes: bytes.map(Int64.init).flatMap { $0 == stamp.size ? nil : $0 }, source: source.map(OutputWriter.MetadataName.text),
            tag: tag == fingerprint ? nil : tag)
        guard var line = try? JSONEncoder().encode(record) else { return }
        line.append(UInt8(ascii: "\n"))
        state.withLock { state in
            guard let descriptor = lockedDescriptor(&state) else {
                state.unrecorded += 1
                state.problem = state.problem ?? "cannot open the journal \(file.path): \(state.openFailure ?? "")"
                return
            }
            defer { flock(descriptor, LOCK_UN) }
            // A torn or damaged last line must not swallow this record: start a fresh line.
            var info = stat()
            let before: off_t = fstat(descriptor, &info) == 0 ? info.st_size : -1
            if before > 0 {
                var last: UInt8 = 0
                if pread(descriptor, &last, 1, before - 1) == 1, last != UInt8(ascii: "\n") {
                    line.insert(UInt8(ascii: "\n"), at: 0)
                }
            }
            // One write(2) a line, under the lock: lines from two processes never interleave.
            let count = line.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            guard count == line.count else {
                let reason = count < 0 ? String(cString: strerror(errno)) : String(cString: strerror(ENOSPC))
                // What a short write left is cut off, so no part of the record is read back.
                if before >= 0 { _ = ftruncate(descriptor, before) }
                state.unrecorded += 1
                state.problem = state.problem ?? "cannot write the journal \(file.path): \(reason)"
                return
            }
            if state.records[record.key] == nil { state.newPaths += 1 }
            Self.noteWritten(path, key: record.key, in: &state)
            state.lines += 1
        }
    }

    /// Why the journal could not be written this run, as a warning, or nil when every record was.
    private static func warning(_ state: State) -> String? {
        guard let problem = state.problem else { return nil }
        let outputs = "\(state.unrecorded) output\(state.unrecorded == 1 ? "" : "s")"
        return problem + ": \(outputs) made but not recorded, so the next run makes them again"
    }

    /// Flushes the journal, and rewrites it without superseded or damaged lines when they are
    /// most of it or there are any damaged ones. The rewrite reads the file again under the lock,
    /// so records other runs appended since this one read it are kept. A run that read only some
    /// paths' records rewrites it too: a server's runs, one for each request, are all such runs,
    /// and the lines of outputs made again would otherwise pile up until a whole run.
    ///
    /// - Returns: warnings naming the journal and the system's reason when a record could not be
    ///   written or the rewrite failed. They do not fail the run: every output is in place, and
    ///   the cost is that the next run makes the unrecorded ones again.
    func finish() -> [String] {
        state.withLock { state in
            var warnings = [Self.warning(state), rewrite(&state)].compactMap { $0 }
            if state.descriptor >= 0 {
                if fsync(state.descriptor) != 0, state.problem == nil {
                    warnings.append("cannot write the journal \(file.path): \(String(cString: strerror(errno)))")
                }
                close(state.descriptor)
                state.descriptor = -1
            }
            return warnings
        }
    }

    /// Rewrites the journal without superseded or damaged lines when `finish()` calls for it;
    /// why that failed (the old journal is kept then), or nil.
    private func rewrite(_ state: inout State) -> String? {
        let distinct = state.plannedPathsInFile + state.newPaths
        guard state.damaged > 0 || state.lines > 2 * distinct + 100 else { return nil }
        guard let descriptor = lockedDescriptor(&state) else { return nil }
        defer { flock(descriptor, LOCK_UN) }
        var all: [DiskPath: [Record]] = [:]
        _ = Self.read(descriptor: descriptor) { all[$0.key, default: []].append($0) }
        let encoder = JSONEncoder()
        var data = Data()
        for records in all.sorted(by: { $0.key.path < $1.key.path }).map(\.value) {
            // Of a path's records, the one that matches the file on disk, else the last.
            let kept =
                records.last { record in
                    Self.stamp(of: record.path).map {
                        $0.size == record.size && Self.text(seconds: $0.seconds, nanoseconds: $0.nanoseconds) == record.modified
                    }
                        ?? false
                } ?? records[records.count - 1]
            guard let line = try? encoder.encode(kept) else { continue }
            data.append(line)
            data.append(UInt8(ascii: "\n"))
        }
        do throws(ReportWriterError) {
            // The old journal stays when the new one cannot be written whole.
            try ReportWriter.writeAtomically(data, to: file.path)
        } catch {
            return state.problem == nil ? "cannot rewrite the journal \(file.path): \(error.reason)" : nil
        }
        state.lines = all.count
        state.plannedPathsInFile = all.count
        state.damaged = 0
        state.newPaths = 0
        return nil
    }

    /// The journal's descriptor, open for appending on the file now at the journal's path and
    /// holding its exclusive lock; nil when the file cannot be opened. Another run may have
    /// replaced the file since it was opened (a rewrite renames a new one into place): then the
    /// new one is opened and locked instead.
    private func lockedDescriptor(_ state: inout State) -> Int32? {
        for _ in 0..<8 {
            if state.descriptor < 0 {
                var folderFailure: String?
                do {
                    try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
                } catch {
                    // A link to nothing there reads as "File exists" from the system.
                    let folder = file.deletingLastPathComponent().path
                    folderFailure = InputFile.brokenLink(at: folder).map { "its folder \(folder) is \($0)" } ?? ErrorText.reason(error)
                }
                state.descriptor = open(file.path, O_RDWR | O_CREAT | O_APPEND | O_NONBLOCK | O_CLOEXEC, 0o644)
                guard state.descriptor >= 0 else {
                    // A folder that could not be made is why, not that the file is missing.
                    let code = errno
                    state.openFailure = code == ENOENT ? folderFailure ?? String(cString: strerror(code)) : String(cString: strerror(code))
                    return nil
                }
                // Records go to a regular file only: a FIFO would take them and hold the run
                // once full, a device would lose them.
                var opened = stat()
                guard fstat(state.descriptor, &opened) == 0, opened.st_mode & S_IFMT == S_IFREG else {
                    state.openFailure = "it is \(RegularFile.kind(of: opened)), not a regular file"
                    close(state.descriptor)
                    state.descriptor = -1
                    return nil
                }
            }
            guard flock(state.descriptor, LOCK_EX) == 0 else {
                state.openFailure = String(cString: strerror(errno))
                return nil
            }
            var held = stat(), current = stat()
            if fstat(state.descriptor, &held) == 0, stat(file.path, &current) == 0,
                held.st_dev == current.st_dev, held.st_ino == current.st_ino
            {
                return state.descriptor
            }
            flock(state.descriptor, LOCK_UN)
            close(state.descriptor)
            state.descriptor = -1
        }
        return nil
    }

    /// A modification time as a record writes it: `seconds.nanoseconds`, the nanoseconds unpadded.
    static func text(seconds: Int, nanoseconds: Int) -> String { "\(seconds).\(nanoseconds)" }

    /// The stamp of what is at `path` (a file, or a tile pyramid's folder), or nil when it is gone.
    static func stamp(of path: String) -> FileStamp? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return FileStamp(anyKind: info)
    }
}
