import Foundation
import TestSupport
import Testing
import Vips

@testable import PipelineKit

/// Remote inputs through the command: the cache commands, and `kill -9` while the cache is written.
@Suite(.serialized) struct RemoteCommandLineTests {
    /// A server with `count` different photos at /photo-N.jpg, each with an ETag.
    func photoServer(count: Int, size: Int = 900) throws -> (TestHTTPServer, [Data]) {
        let photos = try (0..<count).map { index in
            try Fixtures.jpeg(try Fixtures.gradient(width: size + index, height: size * 2 / 3), quality: 95)
        }
        let server = try TestHTTPServer { request, _ in
            let index = Int(request.path.dropFirst("/photo-".count).dropLast(".jpg".count)) ?? -1
            guard photos.indices.contains(index) else { return .init(status: 404) }
            return .init(status: 200, headers: ["ETag": "\"\(index)\""], body: photos[index], behaviour: .stream(chunk: 32 << 10))
        }
        return (server, photos)
    }

    func writePipeline(_ directory: TemporaryDirectory, urls: [String], cache: Bool = true) throws -> String {
        let list = urls.joined(separator: "\n")
        try directory.write(Data(list.utf8), to: "urls.txt")
        let json = """
            {"version": 1, "inputs": [{"list": "urls.txt"}],
             "cache": {"directory": "cache", "enabled": \(cache)},
             "outputs": [{"name": "t", "steps": [{"resize": {"width": 300}}], "encode": {"format": "webp"}, "path": "out/{stem}.webp"}]}
            """
        return try directory.write(Data(json.utf8), to: "pipeline.json")
    }

    @Test func cacheStatsAndClear() throws {
        let (server, _) = try photoServer(count: 2, size: 100)
        let directory = try TemporaryDirectory()
        let file = try writePipeline(directory, urls: [server.url("/photo-0.jpg"), server.url("/photo-1.jpg")])
        #expect(try CommandRunner.run(["run", file]).status == 0)
        let stats = try CommandRunner.run(["cache", "stats", file])
        #expect(stats.status == 0)
        #expect(stats.standardOutput.contains("entries: 2"))
        #expect(stats.standardOutput.contains(directory.path + "/cache"))
        let clear = try CommandRunner.run(["cache", "clear", file])
        #expect(clear.standardOutput.hasPrefix("removed 2 entries"))
        #expect(try CommandRunner.run(["cache", "stats", file]).standardOutput.contains("entries: 0"))
    }

    @Test func aCacheFolderThatIsAFileIsRefusedNotShownEmpty() throws {
        // Given a pipeline whose cache folder is a file
        let directory = try TemporaryDirectory()
        let file = try writePipeline(directory, urls: ["http://127.0.0.1:9/a.jpg"])
        try directory.write(Data("not a folder".utf8), to: "cache")
        // Then stats and clear refuse it as a run does, naming it, and leave it be
        for command in ["stats", "clear"] {
            let result = try CommandRunner.run(["cache", command, file])
            #expect(result.status == 2, "\(command): \(result.standardOutput)")
            #expect(result.standardError.contains("cache: \(directory.path)/cache is not a folder"), "\(result.standardError)")
        }
        #expect(try String(contentsOfFile: directory.path + "/cache", encoding: .utf8) == "not a folder")
    }

    /// A list's line that is no input is said at the list's entry in the pipeline file, and
    /// with the list file's line, however its listing found it wrong.
    @Test func aListsBadLineIsNamedByItsLineAndTheEntry() throws {
        let directory = try TemporaryDirectory()
        let file = try writePipeline(directory, urls: ["http://127.0.0.1:9/a.jpg", "# a comment", "http://[bad/b.jpg", "ftp://x/c.jpg"])
        let result = try CommandRunner.run(["validate", file])
        #expect(result.status == 2, "\(result.standardError)")
        for line in ["3: http://[bad/b.jpg is not a URL", "4: only http, https and s3"] {
            #expect(result.standardError.contains("pipeline.json:1:27: error: inputs[0].list: urls.txt:" + line), "\(result.standardError)")
        }
    }

    /// A remote input whose files are all up to date is not fetched: its size comes from the
    /// journal, so a manifest written anew (removed, or a shard's run again) still has its entry.
    @Test func aManifestWrittenAnewListsRemoteInputsThatWereUpToDate() throws {
        let (server, photos) = try photoServer(count: 2, size: 120)
        let directory = try TemporaryDirectory()
        try directory.write(Data([server.url("/photo-0.jpg"), server.url("/photo-1.jpg")].joined(separator: "\n").utf8), to: "urls.txt")
        let json = """
            {"version": 1, "inputs": [{"list": "urls.txt"}], "cache": {"enabled": false}, "manifest": {"path": "out/manifest.json"},
             "outputs": [{"name": "t", "steps": [{"resize": {"width": 30}}], "encode": {"format": "webp"}, "path": "out/{stem}.webp"}]}
            """
        let file = try directory.write(Data(json.utf8), to: "pipeline.json")
        #expect(try CommandRunner.run(["run", "--quiet", file]).status == 0)
        // When the manifest is removed and the run made again, every file up to date
        try FileManager.default.removeItem(atPath: directory.path + "/out/manifest.json")
        let again = try CommandRunner.run(["run", "--json", file])
        #expect(again.status == 0, "\(again.standardError)")
        #expect(again.standardOutput.contains(#""outputsUpToDate":2"#), "\(again.standardOutput)")
        // Then both inputs are in it, at their own sizes
        let manifest = try ImageManifest.read(from: directory.url.appendingPathComponent("out/manifest.json"))
        let sizes = manifest.inputs.map { "\($0.width)x\($0.height)" }
        let expected = try photos.map { photo in
            let image = try VipsImage.open(data: photo)
            return "\(image.width)x\(image.height)"
        }
        #expect(sizes == expected, "\(manifest.inputs.map(\.source))")

        // And when the journal is as an older version wrote it, without the inputs' sizes
        let cache = directory.path + "/.pipeline-cache"
        let journal = try #require(try FileManager.default.contentsOfDirectory(atPath: cache).first { $0.hasPrefix("journal-") })
        let lines = try String(contentsOfFile: cache + "/" + journal, encoding: .utf8)
        // Wherever the key stands in its record: the order of a record's keys is the hash's.
        let older = lines.replacing(#/"source":"[0-9x]+",|,"source":"[0-9x]+"/#, with: "")
        #expect(older != lines)
        try Data(older.utf8).write(to: URL(fileURLWithPath: cache + "/" + journal))
        try FileManager.default.removeItem(atPath: directory.path + "/out/manifest.json")
        let third = try CommandRunner.run(["run", "--json", file])
        #expect(third.status == 0, "\(third.standardError)")
        #expect(third.standardOutput.contains(#""outputsUpToDate":2"#), "\(third.standardOutput)")
        // Then the inputs are fetched for their headers alone, and both are in the manifest again
        let rewritten = try ImageManifest.read(from: directory.url.appendingPathComponent("out/manifest.json"))
        #expect(rewritten.inputs.map { "\($0.width)x\($0.height)" } == expected, "\(rewritten.inputs.map(\.source))")
    }

    @Test func killedWhileCachingThenRunAgainGivesCorrectOutputs() throws {
        // Given a reference run without cache, into its own folder
        let (server, _) = try photoServer(count: 24)
        let urls = (0..<24).map { server.url("/photo-\($0).jpg") }
        let reference = try TemporaryDirectory()
        #expect(try CommandRunner.run(["run", try writePipeline(reference, urls: urls, cache: false)]).status == 0)

        // When runs that cache are killed with SIGKILL at random moments, again and again
        let directory = try TemporaryDirectory()
        let file = try writePipeline(directory, urls: urls)
        var generator = SystemRandomNumberGenerator()
        let cacheFolder = directory.url.appendingPathComponent("cache")
        func filesInCache() -> Int { FileManager.default.enumerator(atPath: cacheFolder.path)?.allObjects.count ?? 0 }
        for _ in 0..<12 {
            let before = filesInCache()
            let process = try CommandRunner.start(["run", "--quiet", file])
            // Killed at a random moment after this run began writing to the cache: a fixed delay
            // from the start would, on a loaded or sanitized machine, kill every run before then.
            let deadline = Date().addingTimeInterval(30)
            while process.isRunning, filesInCache() == before, Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
            Thread.sleep(forTimeInterval: Double.random(in: 0...0.3, using: &generator))
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        // Then no cache entry is damaged, and a full run makes the same outputs byte for byte
        let cache = DiskCache(directory: directory.url.appendingPathComponent("cache"), maxSize: 1 << 30)
        #expect(cache.statistics().entries > 0, "the killed runs never got as far as caching")
        for url in urls {
            let path = cache.entryPath(for: url)
            if let data = FileManager.default.contents(atPath: path) {
                #expect(DiskCache.decode(data) != nil, "damaged entry for \(url)")
            }
        }
        let final = try CommandRunner.run(["run", file])
        #expect(final.status == 0, "\(final.standardError)")
        for index in 0..<24 {
            let name = "out/photo-\(index).webp"
            let made = FileManager.default.contents(atPath: directory.path + "/" + name)
            let expected = FileManager.default.contents(atPath: reference.path + "/" + name)
            #expect(made != nil && made == expected, "\(name) differs from the uninterrupted run")
        }
    }
}
