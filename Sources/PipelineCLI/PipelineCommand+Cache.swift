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
                let cleared = cache.clear()
                print(
                    "removed \(cleared.removed.entries) entries (\(cleared.removed.bytes) bytes) from "
                        + cache.directory.path.escapingControlCharacters)
                if let reason = cleared.reason {
                    printError("error: \(file): cache: \(cleared.left) files could not be removed (\(reason))".escapingControlCharacters)
                    throw ExitCode.failure
                }
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
    // A folder that cannot be listed would be shown as empty, and cleared of nothing.
    if FileManager.default.fileExists(atPath: cache.directory.path), access(cache.directory.path, R_OK | X_OK) != 0 {
        printError(
            "error: \(file): cache: cannot read \(cache.directory.path): \(String(cString: strerror(errno)))".escapingControlCharacters)
        throw ExitCode.failure
    }
    return DiskCache(directory: cache.directory, maxSize: cache.maxSize)
}
