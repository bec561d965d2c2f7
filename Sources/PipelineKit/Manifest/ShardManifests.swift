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
        /// What is wrong, naming the file or files.
        public let description: String
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
    /// - Returns: how many inputs the written manifest has.
    /// - Throws: `Failure` when a shard is missing, a file cannot be read as a manifest, one was
    ///   written by another pipeline, an input is in two, or the manifest cannot be written;
    ///   nothing is written then.
    public func write(pipeline: String) throws(Failure) -> Int {
        guard missing.isEmpty else {
            throw Failure(
                description: "missing shards: \(missing.map(String.init).joined(separator: ", ")) of \(count); nothing was written")
        }
        do {
            let spool = try ManifestSpool(folder: settings.file.deletingLastPathComponent().path)
            var seen: [String: String] = [:]
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
                    if let earlier = seen[input.source] {
                        throw Failure(description: "\(input.source) is in both \(earlier) and \(file.lastPathComponent)")
                    }
                    seen[input.source] = file.lastPathComponent
                    try spool.append(source: input.source, text: ManifestSpool.entryText(input))
                }
            }
            try spool.writeManifest(pipeline: pipeline, to: settings.file.path)
            return seen.count
        } catch let failure as Failure {
            throw failure
        } catch let error as ReportWriterError {
            throw Failure(description: "cannot write the manifest \(error.path): \(error.reason)")
        } catch {
            throw Failure(description: "cannot write the manifest \(settings.file.path): \(ErrorText.reason(error))")
        }
    }
}
