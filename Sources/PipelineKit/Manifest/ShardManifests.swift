import Foundation

/// The manifests a sharded run's shards wrote beside the one the pipeline file names
/// (`manifest.shard-2-of-4.json`, see `ManifestSettings.forShard(_:)`), joined into the manifest
/// one run over every input would write: the same entries, sorted by source, in the same bytes.
public struct ShardManifests: Sendable {
    /// The manifest the pipeline file names, which the joined one is written to.
    public let settings: ManifestSettings
    /// How many shards the run had, as the files' names say.
    public let count: Int
    /// The file of each shard found, by its index.
    public let files: [Int: URL]

    /// Why shard manifests cannot be found or joined, naming the file.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        /// What is wrong, naming the file or files: one line, or one for each shard out of date.
        public let lines: [String]
        /// Whether a shard's manifest is left from an earlier run: its shard must run again,
        /// as a missing one must.
        public var isStale = false

        /// What is wrong, in one line.
        init(description: String) { lines = [description] }

        /// Shards out of date, a line each.
        init(staleShards: [String]) {
            lines = staleShards
            isStale = true
        }

        /// Every line.
        public var description: String { lines.joined(separator: "\n") }
    }

    /// The shards no file was found for, in order.
    public var missing: [Int] { (0..<count).filter { files[$0] == nil } }

    /// The shard manifests beside `settings.file`.
    ///
    /// - Throws: `Failure` when the folder cannot be read, holds none, or holds those of runs
    ///   with different shard counts (which would join inputs of two runs).
    public static func find(beside settings: ManifestSettings) throws(Failure) -> ShardManifests {
        let folder = settings.file.deletingLastPathComponent()
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        } catch {
            throw Failure(description: "cannot read the folder \(folder.path): \(ErrorText.reason(error))")
        }
        var byCount: [Int: [Int: URL]] = [:]
        for name in names {
            guard let numbers = numbers(in: name, for: settings) else { continue }
            guard let shard = try? Shard(index: numbers.index, count: numbers.count),
                settings.forShard(shard).file.lastPathComponent == name
            else {
                throw Failure(
                    description: "\(folder.appendingPathComponent(name).path) names no shard of \(numbers.count) (0 to "
                        + "\(numbers.count - 1)): remove it")
            }
            byCount[shard.count, default: [:]][shard.index] = folder.appendingPathComponent(name)
        }
        let pattern = "\(settings.file.deletingPathExtension().lastPathComponent).shard-*-of-*\(extensionSuffix(settings))"
        guard let (count, files) = byCount.first, byCount.count == 1 else {
            if byCount.isEmpty { throw Failure(description: "no shard manifest (\(pattern)) in \(folder.path)") }
            let counts = byCount.keys.sorted().map(String.init).joined(separator: ", ")
            let files = byCount.sorted { $0.key < $1.key }.map { count, files in
                "\(count): " + files.sorted { $0.key < $1.key }.map(\.value.lastPathComponent).joined(separator: ", ")
            }
            throw Failure(
                description:
                    "the shard manifests in \(folder.path) are of runs of \(counts) shards (\(files.joined(separator: "; "))): "
                    + "remove those of the runs that are not the last")
        }
        return ShardManifests(settings: settings, count: count, files: files)
    }

    /// The index and count a name shaped as one of `settings`' shard manifests
    /// (`manifest.shard-I-of-N.json`) holds, whether or not they are a shard's.
    private static func numbers(in name: String, for settings: ManifestSettings) -> (index: Int, count: Int)? {
        let prefix = settings.file.deletingPathExtension().lastPathComponent + ".shard-"
        let suffix = extensionSuffix(settings)
        guard name.hasPrefix(prefix), name.hasSuffix(suffix), name.count > prefix.count + suffix.count else { return nil }
        let numbers = name.dropFirst(prefix.count).dropLast(suffix.count).components(separatedBy: "-of-")
        guard numbers.count == 2, let index = Int(numbers[0]), let count = Int(numbers[1]) else { return nil }
        return (index, count)
    }

    /// The manifest's extension with its dot (`.json`), or nothing.
    private static func extensionSuffix(_ settings: ManifestSettings) -> String {
        settings.file.pathExtension.isEmpty ? "" : "." + settings.file.pathExtension
    }

    /// Writes the manifest of `pipeline` (its `name`) with every shard's entries to
    /// `settings.file`, through a temporary file renamed over it. Each shard's manifest is read
    /// whole in turn; their entries wait on disk, as a run's do.
    ///
    /// - Parameters:
    ///   - pipeline: the pipeline's `name`, which every shard's manifest must have.
    ///   - current: the inputs the pipeline has now, which each shard's manifest must agree
    ///     with; nil joins the manifests as they are.
    /// - Returns: how many entries the written manifest has: its inputs, as a run counts them.
    /// - Throws: `Failure` when a shard is missing, a file cannot be read as a manifest, one was
    ///   written by another pipeline, an input is in two, a shard's manifest is older than its
    ///   inputs (`Failure.isStale`), or the manifest cannot be written; nothing is written then.
    public func write(pipeline: String, current: CurrentInputs? = nil) throws(Failure) -> Int {
        guard missing.isEmpty else {
            throw Failure(
                description: "missing shards: \(missing.map(String.init).joined(separator: ", ")) of \(count); nothing was written")
        }
        do {
            let spool = try ManifestSpool(folder: settings.file.deletingLastPathComponent().path)
            // Names by their bytes: two that differ only in their Unicode form (é as one
            // character, or as e and an accent) are two files and two keys, and two inputs.
            var seen: [DiskPath: String] = [:]
            var entries = 0
            var staleShards: [String] = []
            for index in 0..<count {
                guard let file = files[index] else { continue }
                let manifest: ImageManifest
                do {
                    manifest = try ImageManifest.read(from: file)
                } catch {
                    throw Failure(description: "cannot read \(file.path) as a manifest: \(ErrorText.reason(error))")
                }
                guard manifest.pipeline == pipeline else {
                    throw Failure(
                        description: "\(file.path) is the manifest of pipeline \"\(manifest.pipeline)\", not of \"\(pipeline)\"")
                }
                for input in manifest.inputs {
                    // A source listed twice (two globs, to two paths) has two entries in its shard's.
                    if let earlier = seen[DiskPath(input.source)], earlier != file.lastPathComponent {
                        throw Failure(description: "\(input.source) is in both \(earlier) and \(file.lastPathComponent)")
                    }
                    seen[DiskPath(input.source)] = file.lastPathComponent
                    try spool.append(source: input.source, text: ManifestSpool.entryText(input))
                    entries += 1
                }
                // Every shard out of date is named at once: a job then runs them all again in one go.
                if let current, let stale = current.staleness(of: manifest, shard: index, file: file) {
                    staleShards.append("\(file.path) is not what shard \(index) makes now: \(stale); run shard \(index) of \(count) again")
                }
            }
            guard staleShards.isEmpty else {
                throw Failure(staleShards: staleShards.dropLast() + [staleShards[staleShards.count - 1] + "; nothing was written"])
            }
            try spool.writeManifest(pipeline: pipeline, to: settings.file.path)
            return entries
        } catch let failure as Failure {
            throw failure
        } catch let error as ReportWriterError {
            throw Failure(description: "cannot write the manifest \(error.path.isEmpty ? settings.file.path : error.path): \(error.reason)")
        } catch {
            throw Failure(description: "cannot write the manifest \(settings.file.path): \(ErrorText.reason(error))")
        }
    }
}

extension ShardManifests {
    /// The inputs a pipeline has now, by the names its manifests give them, each with its shard
    /// and, for a local file, when it last changed. A shard's manifest left from an earlier run
    /// (a shard that did not run this time) lists inputs gone or moved to another shard, or
    /// was written before one of its inputs was; joined as it is, the manifest would name files
    /// that do not match their inputs.
    public struct CurrentInputs: Sendable {
        /// Each input's shard, by its name.
        private let shards: [DiskPath: Int]
        /// The local inputs of each shard with their modification times (part of the version a
        /// run compares), sorted by name.
        private let modified: [Int: [(source: String, time: timespec)]]
        /// The names and versions of each shard's inputs, as a shard's manifest records them.
        private let versions: [Int: ImageManifest.ShardRun.InputsDigest]
        /// The names of each shard's inputs, as a shard's manifest records them.
        private let names: [Int: ImageManifest.ShardRun.InputsDigest]
        /// The settings entries are made with now, as a shard's manifest records them.
        private let settings: String

        /// The inputs `plan` lists, split into `count` shards as a sharded run splits them.
        public init(plan: RunPlan, count: Int) {
            let base = RunPlan.realPath(plan.definition.baseDirectory.path)
            var shards: [DiskPath: Int] = [:]
            var modified: [Int: [(source: String, time: timespec)]] = [:]
            var names: [Int: ImageManifest.ShardRun.InputsDigest] = [:]
            var versions: [Int: ImageManifest.ShardRun.InputsDigest] = [:]
            for item in plan.items {
                for listing in item.listings where listing.refusal == nil {
                    let input = listing.input
                    let shard = Shard.shard(of: RunPlan.SourceKey(input).shardKey(base: base), count: count)
                    shards[DiskPath(input.displayName)] = shard
                    names[shard, default: .init()].add(input.displayName)
                    // One look at a local file gives both its version and its time.
                    let stamp = input.isRemote ? nil : FileStamp(path: input.path)
                    versions[shard, default: .init()].add(ImageManifest.ShardRun.named(input, stamp: stamp))
                    if let stamp {
                        modified[shard, default: []].append(
                            (input.displayName, timespec(tv_sec: stamp.seconds, tv_nsec: stamp.nanoseconds)))
                    }
                }
            }
            self.shards = shards
            self.modified = modified.mapValues { $0.sorted { $0.source < $1.source } }
            self.names = names
            self.versions = versions
            settings = ImageManifest.ShardRun.settingsDigest(of: plan.definition)
        }

        /// What shows that `manifest`, shard `shard`'s at `file`, is from an earlier run than
        /// its inputs, or nil: an entry whose input is gone or in another shard, or a local input
        /// of the shard written after the file was.
        func staleness(of manifest: ImageManifest, shard: Int, file: URL) -> String? {
            for entry in manifest.inputs {
                guard let now = shards[DiskPath(entry.source)] else { return "it lists \(entry.source), no longer an input" }
                guard now == shard else { return "it lists \(entry.source), which is in shard \(now) now" }
            }
            // What the run recorded (manifests of versions before it have no record): a run
            // stopped part-way, or one of other inputs or other settings than the file has now,
            // whose entries are not those a run now would make.
            if let run = manifest.shard {
                if !run.finished { return "its run was stopped before it had been through its inputs" }
                if run.inputs != (names[shard] ?? .init()).text {
                    return "its run had other inputs than the shard has now (one added, removed or renamed since, whatever its time)"
                }
                if run.settings != settings { return "its run had other settings than the pipeline file has now" }
            }
            if let written = Self.modificationTime(of: file.path),
                let later = modified[shard]?.first(where: { Self.isLater($0.time, than: written) })
            {
                // An input the manifest has no entry for failed in that run, or came after it.
                let listed = manifest.inputs.contains { $0.source.utf8.elementsEqual(later.source.utf8) }
                return "\(later.source) \(listed ? "changed" : "came") after it was written"
            }
            // As the journal tells a changed input: one replaced with its old time kept (`rsync -a`)
            // is another file, an object replaced has another ETag.
            if let recorded = manifest.shard?.versions, recorded != (versions[shard] ?? .init()).text {
                return "an input of it has changed since its run (other bytes, or another file in its place, whatever its time)"
            }
            return Self.missingFile(of: manifest, besides: file)
        }

        /// Why a local file `manifest` lists is not the one its run wrote: gone, or of another
        /// size (removed, or made again by another run since); nil when every one is there. A
        /// run's own manifest lists only files that are there. Paths are taken from the
        /// manifest's folder as named, `..` and all, as the run wrote them: through a linked
        /// folder, `..` is the link's parent, not its target's.
        private static func missingFile(of manifest: ImageManifest, besides file: URL) -> String? {
            let folder = file.deletingLastPathComponent()
            func place(_ path: String) -> String { folder.appendingPathComponent(path).standardized.path }
            for entry in manifest.inputs {
                for output in entry.outputs.values {
                    for listed in (output.formats + (output.art ?? []).flatMap(\.formats)).flatMap(\.files)
                    where ObjectLocation(listed.path) == nil {
                        var info = stat()
                        guard stat(place(listed.path), &info) == 0 else { return "it lists \(listed.path), which is not there" }
                        if Int(info.st_size) != listed.bytes {
                            return "it lists \(listed.path) of \(listed.bytes) bytes, which has \(info.st_size) now"
                        }
                    }
                    // A pyramid: its `.dzi` and the folder of its tiles, or the folder of another layout.
                    if let tiles = output.tiles, ObjectLocation(tiles.path) == nil {
                        let dzi = tiles.path.hasSuffix(".dzi")
                        for path in [tiles.path] + (dzi ? [String(tiles.path.dropLast(4)) + "_files"] : [])
                        where !FileManager.default.fileExists(atPath: place(path)) {
                            return "it lists \(path), which is not there"
                        }
                    }
                }
            }
            return nil
        }

        private static func modificationTime(of path: String) -> timespec? {
            var info = stat()
            guard stat(path, &info) == 0 else { return nil }
            return info.st_mtim
        }

        private static func isLater(_ time: timespec, than other: timespec) -> Bool {
            (time.tv_sec, time.tv_nsec) > (other.tv_sec, other.tv_nsec)
        }
    }
}
