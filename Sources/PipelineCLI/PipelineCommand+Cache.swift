import ArgumentParser
import Foundation
import PipelineKit

extension PipelineCommand {
    struct Cache: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show or empty a pipeline's disk cache of fetched images.",
            subcommands: [Stats.self, Clear.self]
        )

        struct Stats: ParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Print the cache's folder, entries and size.")

            @Argument(help: "The pipeline file (JSON).", completion: .file(extensions: ["json"]))
            var file: String

            func run() throws {
                let cache = try diskCache(of: file)
                let statistics = cache.statistics()
                print("cache: \(cache.directory.path.escapingControlCharacters)")
                print("entries: \(statistics.entries)")
                print("size: \(statistics.bytes) bytes (limit \(cache.maxSize))")
            }
        }

        struct Clear: ParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Remove every entry of the cache.")

            @Argument(help: "The pipeline file (JSON).", completion: .file(extensions: ["json"]))
            var file: String

            func run() throws {
                let cache = try diskCache(of: file)
                let before = cache.statistics()
                cache.clear()
                print("removed \(before.entries) entries (\(before.bytes) bytes) from \(cache.directory.path.escapingControlCharacters)")
            }
        }
    }
}

/// The disk cache a pipeline file describes, whether or not it is enabled; one whose folder is
/// something else (a file) is refused, as a run refuses it, rather than shown as empty.
private func diskCache(of file: String) throws -> DiskCache {
    let cache = try loadPipeline(file).definition.cache
    var isFolder: ObjCBool = false
    if FileManager.default.fileExists(atPath: cache.directory.path, isDirectory: &isFolder), !isFolder.boolValue {
        printError("error: \(file): cache: \(cache.directory.path) is not a folder".escapingControlCharacters)
        throw ExitCode.invalidInput
    }
    return DiskCache(directory: cache.directory, maxSize: cache.maxSize)
}
