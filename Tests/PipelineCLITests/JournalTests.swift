import Foundation
import StandardProcessors
import TestSupport
import Testing

@testable import PipelineKit

/// The journal of incremental runs under faults: runs writing it at once, a damaged tail.
@Suite struct JournalTests {
    /// `count` small JPEGs named `prefix0.jpg`… under `folder`.
    func writeInputs(_ directory: TemporaryDirectory, prefix: String, count: Int, folder: String = "in") throws {
        for index in 0..<count {
            try directory.write(
                try Fixtures.jpeg(try Fixtures.gradient(width: 64 + index, height: 48)), to: "\(folder)/\(prefix)\(index).jpg")
        }
    }

    /// A pipeline file named `name` in the folder, making two outputs of each input `glob` matches.
    @discardableResult
    func writePipeline(
        _ directory: TemporaryDirectory, file: String = "pipeline.json", name: String = "p", glob: String = "in/*.jpg",
        cache: String = ".cache"
    ) throws -> String {
        let json = PipelineHarness.json(
            inputs: [glob],
            outputs: [
                #"{"name": "small", "steps": [{"resize": {"width": 16}}], "encode": {"format": "jpeg"}, "path": "out/{stem}-small.jpg"}"#,
                #"{"name": "large", "steps": [{"resize": {"width": 32}}], "encode": {"format": "png"}, "path": "out/{stem}-large.png"}"#,
            ], extra: #""name": "\#(name)", "cache": {"directory": \#(JSONNode.quoted(cache))}"#)
        return try directory.write(Data(json.utf8), to: file)
    }

    func journalPath(_ file: String) throws -> String {
        let definition = try Pipeline(contentsOf: URL(fileURLWithPath: file), processors: .standard).definition
        return definition.cache.journalFile(pipeline: definition.name, baseDirectory: definition.baseDirectory).path
    }

    /// Fills the journal with 300 lines that supersede one another, so that a run rewrites it
    /// when it finishes (the moment a rewrite could drop another run's records).
    func fillWithSupersededLines(_ journal: String) throws {
        let line = #"{"path":"/nowhere/x.jpg","fingerprint":"0","size":1,"modified":"0.0","width":1,"height":1}"# + "\n"
        try FileManager.default.createDirectory(atPath: (journal as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(String(repeating: line, count: 300).utf8).write(to: URL(fileURLWithPath: journal))
    }

    /// Runs `pipeline run --quiet` on each file in its own process, all at once.
    func runAtOnce(_ files: [String]) throws -> [Int32] {
        let processes = try files.map { file in
            let process = Process()
            process.executableURL = CommandRunner.executable
            process.arguments = ["run", "--quiet", file]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            return process
        }
        return processes.map {
            $0.waitUntilExit(); return $0.terminationStatus
        }
    }

    /// The summary line's counts of a run from the command line, and its standard error.
    func rerun(_ file: String) throws -> (written: Int, upToDate: Int, standardError: String) {
        let result = try CommandRunner.run(["run", "--json", file])
        #expect(result.status == 0, "\(result.standardError)")
        let last = try #require(result.standardOutput.split(separator: "\n").last)
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any])
        return (summary["outputsWritten"] as? Int ?? -1, summary["outputsUpToDate"] as? Int ?? -1, result.standardError)
    }

    @Test func twoRunsOfOneFileAtOnceLoseNoRecord() throws {
        // Given 30 inputs with 2 outputs each, and a journal the runs will rewrite as they finish
        let directory = try TemporaryDirectory()
        try writeInputs(directory, prefix: "p", count: 30)
        let file = try writePipeline(directory)
        try fillWithSupersededLines(try journalPath(file))
        // When two processes run the file at once
        #expect(try runAtOnce([file, file]) == [0, 0])
        // Then the next run finds every output up to date
        let next = try rerun(file)
        #expect(next.written == 0 && next.upToDate == 60, "written \(next.written), up to date \(next.upToDate)")
    }

    @Test func twoPipelinesSharingOneJournalAtOnceLoseNoRecord() throws {
        // Given two pipeline files of one name in one folder (so one journal), each with its own inputs
        let directory = try TemporaryDirectory()
        try writeInputs(directory, prefix: "a", count: 20)
        try writeInputs(directory, prefix: "b", count: 20)
        let first = try writePipeline(directory, file: "a.json", glob: "in/a*.jpg")
        let second = try writePipeline(directory, file: "b.json", glob: "in/b*.jpg")
        #expect(try journalPath(first) == journalPath(second))
        try fillWithSupersededLines(try journalPath(first))
        // When they run at once
        #expect(try runAtOnce([first, second]) == [0, 0])
        // Then each one's next run finds all of its outputs up to date
        for file in [first, second] {
            let next = try rerun(file)
            #expect(next.written == 0 && next.upToDate == 40, "\(file): written \(next.written), up to date \(next.upToDate)")
        }
    }

    @Test func aPipelineFileReachedThroughALinkToItsFolderKeepsOneJournal() throws {
        // Given a pipeline file in `real/`, and `link` a symbolic link to that folder
        let directory = try TemporaryDirectory()
        try writeInputs(directory, prefix: "p", count: 3, folder: "real/in")
        let file = try writePipeline(directory, file: "real/pipeline.json")
        try FileManager.default.createSymbolicLink(atPath: directory.path + "/link", withDestinationPath: directory.path + "/real")
        let throughLink = directory.path + "/link/pipeline.json"
        // When it runs by the link, then by its real path, then by the link again
        let first = try rerun(throughLink)
        let second = try rerun(file)
        let third = try rerun(throughLink)
        // Then only the first run writes, and there is one journal, whose path is the same both ways
        #expect(first.written == 6)
        #expect(second.written == 0 && second.upToDate == 6, "written \(second.written), up to date \(second.upToDate)")
        #expect(third.written == 0 && third.upToDate == 6, "written \(third.written), up to date \(third.upToDate)")
        #expect(try journalPath(throughLink) == journalPath(file))
        let journals = try FileManager.default.contentsOfDirectory(atPath: directory.path + "/real/.cache").filter {
            $0.hasPrefix("journal-")
        }
        #expect(journals.count == 1, "\(journals)")
    }

    /// A cache folder that is a link to nothing fails with "File exists" from the system, which
    /// points the wrong way: the warning says what is there.
    @Test func aCacheFolderThatIsALinkToNothingIsNamedAsOne() throws {
        let directory = try TemporaryDirectory()
        try writeInputs(directory, prefix: "p", count: 1)
        let file = try writePipeline(directory)
        try FileManager.default.createSymbolicLink(atPath: directory.path + "/.cache", withDestinationPath: "gone/cache")
        let result = try CommandRunner.run(["run", "--quiet", file])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(
            result.standardError.contains("its folder \(directory.path)/.cache is a symbolic link to nothing"),
            "\(result.standardError)")
        #expect(!result.standardError.contains("File exists"), "\(result.standardError)")
    }

    @Test func aDamagedJournalLosesNoNewRecordAndWarnsOnce() throws {
        // Given a run's journal whose last line was torn, with garbage before it
        let directory = try TemporaryDirectory()
        try writeInputs(directory, prefix: "p", count: 3)
        let file = try writePipeline(directory)
        #expect(try CommandRunner.run(["run", "--quiet", file]).status == 0)
        let journal = try FileHandle(forWritingTo: URL(fileURLWithPath: try journalPath(file)))
        try journal.seekToEnd()
        try journal.write(contentsOf: Data("\u{1}\u{2}garbage\n{\"path\":\"/torn".utf8))
        try journal.close()
        // And one output to make again
        try FileManager.default.removeItem(atPath: directory.path + "/out/p1-small.jpg")
        // When it runs again
        let second = try rerun(file)
        // Then it warns once about the damaged lines, keeps every good record and makes only the missing output
        #expect(second.standardError.components(separatedBy: "warning: the journal").count == 2, "\(second.standardError)")
        #expect(second.standardError.contains("2 damaged lines"), "\(second.standardError)")
        #expect(second.written == 1 && second.upToDate == 5)
        // And the record of that output was kept: the next run makes nothing, and does not warn
        let third = try rerun(file)
        #expect(third.written == 0 && third.upToDate == 6, "written \(third.written), up to date \(third.upToDate)")
        #expect(!third.standardError.contains("warning"), "\(third.standardError)")
    }

    @Test func recordsOfOutputsMadeGoToTheFileNotToMemory() throws {
        // Given a new journal
        let directory = try TemporaryDirectory()
        let file = try writePipeline(directory)
        let definition = try Pipeline(contentsOf: URL(fileURLWithPath: file), processors: .standard).definition
        let url = URL(fileURLWithPath: try journalPath(file))
        let journal = OutputJournal(file: url, definition: definition)
        // When it records fifty outputs
        var written: [String] = []
        for index in 0..<50 {
            let path = try directory.write(Data("output \(index)".utf8), to: "out/\(index).jpg")
            journal.recordWritten(path, planned: path, fingerprint: "f\(index)", size: ImageSize(width: 1, height: 1))
            written.append(path)
        }
        // Then it holds none of them in memory, however many it recorded
        #expect(journal.recordsInMemory == 0)
        #expect(journal.finish() == [])
        // And the file has every one: a journal read from it finds each output up to date
        let read = OutputJournal(file: url, definition: definition)
        #expect(read.recordsInMemory == 50)
        for (index, path) in written.enumerated() {
            #expect(read.upToDate(path, fingerprint: "f\(index)")?.path == path)
        }
    }

    @Test func aJournalReadForPartOfAPlanHoldsOnlyItsPathsAndRewritesTheFileAsAWholeReadWould() throws {
        // Given a journal of fifty outputs, each recorded five times: most of its lines superseded
        let directory = try TemporaryDirectory()
        let file = try writePipeline(directory)
        let definition = try Pipeline(contentsOf: URL(fileURLWithPath: file), processors: .standard).definition
        let url = URL(fileURLWithPath: try journalPath(file))
        let writer = OutputJournal(file: url, definition: definition)
        var written: [String] = []
        for index in 0..<50 {
            let path = try directory.write(Data("output \(index)".utf8), to: "out/\(index).jpg")
            for _ in 0..<5 { writer.recordWritten(path, planned: path, fingerprint: "f\(index)", size: ImageSize(width: 1, height: 1)) }
            written.append(path)
        }
        #expect(writer.finish() == [])
        let before = try Data(contentsOf: url)
        // When a journal is read for two of the outputs (3 and 13: one path ends the other's)
        let part = OutputJournal(file: url, definition: definition, plannedPaths: [written[3], written[13]])
        // Then it holds their records alone, and finds them up to date and no other
        #expect(part.recordsInMemory == 10)
        #expect(part.upToDate(written[3], fingerprint: "f3")?.path == written[3])
        #expect(part.upToDate(written[13], fingerprint: "f13")?.path == written[13])
        #expect(part.upToDate(written[23], fingerprint: "f23") == nil)
        // And, counting the other paths' lines without decoding them, it rewrites the file
        // without the superseded ones, as a journal read whole does
        #expect(part.finish() == [])
        #expect(try Data(contentsOf: url).count * 5 == before.count)
        #expect(OutputJournal(file: url, definition: definition).recordsInMemory == 50)
        // And a journal most of whose lines count is left as it is: one output made 160 times more,
        // each under a planned path of its own with a `{width}` (two written paths a planned one)
        let again = OutputJournal(file: url, definition: definition, plannedPaths: [written[7]])
        for index in 0..<160 {
            again.recordWritten(
                written[index % 2], planned: directory.path + "/out/{width}-\(index).jpg", fingerprint: "w\(index)",
                size: ImageSize(width: 1, height: 1))
        }
        #expect(again.finish() == [])
        let grown = try Data(contentsOf: url)
        #expect(OutputJournal(file: url, definition: definition, plannedPaths: [written[7]]).finish() == [])
        #expect(try Data(contentsOf: url) == grown)
        // And a torn last line that a part's read finds is cleaned away: the next read does not warn of it
        let handle = try FileHandle(forWritingTo: url)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(#"{"path":"#.utf8))
        try handle.close()
        let torn = OutputJournal(file: url, definition: definition, plannedPaths: [written[3]])
        #expect(torn.warnings.count == 1)
        #expect(torn.finish() == [])
        #expect(OutputJournal(file: url, definition: definition, plannedPaths: [written[3]]).warnings == [])
        #expect(OutputJournal(file: url, definition: definition).recordsInMemory == 210)
    }

    @Test func aRecordReadBackIsTheOneWrittenWhateverItHolds() throws {
        // Given records of the run's own fingerprints: a plain output, one whose path waited for
        // its size, and one whose quality was searched
        let directory = try TemporaryDirectory()
        let file = try writePipeline(directory)
        let definition = try Pipeline(contentsOf: URL(fileURLWithPath: file), processors: .standard).definition
        let url = URL(fileURLWithPath: try journalPath(file))
        let journal = OutputJournal(file: url, definition: definition)
        let fingerprint = journal.fingerprint(version: "v1", output: 0)
        let plain = try directory.write(Data("plain".utf8), to: "out/plain.jpg")
        let sized = try directory.write(Data("sized".utf8), to: "out/a-64x48.jpg")
        let searched = try directory.write(Data("searched".utf8), to: "out/searched.jpg")
        let planned = directory.url.appendingPathComponent("out/a-{width}x{height}.jpg").path
        journal.recordWritten(plain, planned: plain, fingerprint: fingerprint, size: ImageSize(width: 64, height: 48))
        journal.recordWritten(sized, planned: planned, fingerprint: fingerprint, size: ImageSize(width: 64, height: 48))
        journal.recordWritten(
            searched, planned: searched, fingerprint: fingerprint, size: ImageSize(width: 32, height: 24),
            searched: SearchedQuality(quality: 71, score: 80.25, target: 80))
        #expect(journal.finish() == [])

        // When a journal is read from the file, each is found as it was written
        let read = OutputJournal(file: url, definition: definition)
        let lines = try String(contentsOf: url, encoding: .utf8).split(separator: "\n").map {
            try JSONDecoder().decode(OutputJournal.Record.self, from: Data($0.utf8))
        }
        #expect(read.upToDate(plain, fingerprint: fingerprint) == lines[0])
        #expect(read.upToDate(planned, fingerprint: fingerprint) == lines[1])
        #expect(lines[1].path == sized && lines[1].planned == planned)
        #expect(read.upToDate(searched, fingerprint: fingerprint) == lines[2])
        #expect(lines[2].quality == 71 && lines[2].score == 80.25)

        // And another fingerprint, or a file changed since, is not up to date
        #expect(read.upToDate(plain, fingerprint: journal.fingerprint(version: "v2", output: 0)) == nil)
        try directory.write(Data("changed".utf8), to: "out/plain.jpg")
        #expect(read.upToDate(plain, fingerprint: fingerprint) == nil)
    }

}

/// A cache folder (which holds the journal) that cannot be written: the journal says once, at
/// the end, how many outputs it could not record.
@Suite(.enabled(if: TemporaryMount.isSupported, "mounting a tmpfs needs root or CAP_SYS_ADMIN"))
struct UnwritableCacheFolderTests {
    let journal = JournalTests()

    @Test func aReadOnlyCacheFolderIsAWarningNamingTheJournalAndTheReason() throws {
        // Given a pipeline whose cache folder is on a read-only file system
        let readOnly = try TemporaryMount(size: "64k", readOnly: true)
        let directory = try TemporaryDirectory()
        try journal.writeInputs(directory, prefix: "p", count: 2)
        let file = try journal.writePipeline(directory, cache: readOnly.path + "/cache")
        // When it runs, even at the most verbose log level
        let result = try CommandRunner.run(["run", "--log-level", "trace", file])
        // Then the run succeeds, and one warning names the journal, the reason and what it costs
        #expect(result.status == 0, "\(result.standardError)")
        let warnings = result.standardError.split(separator: "\n").filter { $0.hasPrefix("warning: ") && $0.contains("cache") }
        #expect(
            warnings == [
                "warning: cannot open the journal \(try journal.journalPath(file)): Read-only file system: "
                    + "4 outputs made but not recorded, so the next run makes them again"
            ], "\(result.standardError)")
    }

    @Test func aFullCacheFolderIsAWarningNamingTheJournalAndTheReason() throws {
        // Given a pipeline whose cache folder is on a file system with no space left
        let full = try TemporaryMount(size: "64k")
        let filler = open(full.path + "/filler", O_WRONLY | O_CREAT, 0o644)
        let block = [UInt8](repeating: 1, count: 4096)
        while write(filler, block, block.count) > 0 {}
        close(filler)
        let directory = try TemporaryDirectory()
        try journal.writeInputs(directory, prefix: "p", count: 2)
        let file = try journal.writePipeline(directory, cache: full.path)
        // When it runs
        let result = try CommandRunner.run(["run", file])
        // Then the run succeeds, and a warning names the journal and the reason
        #expect(result.status == 0, "\(result.standardError)")
        #expect(
            result.standardError.contains("warning: cannot write the journal \(try journal.journalPath(file)): No space left on device"),
            "\(result.standardError)")
    }

    @Test func aJournalThatFillsTheDiskMidRunIsAWarningAndHoldsNoTornRecord() throws {
        // Given a journal on a file system with room for a fraction of one record: its last
        // page holds all but a few bytes of newlines (no records), and a filler takes the rest
        let full = try TemporaryMount(size: "64k")
        let directory = try TemporaryDirectory()
        try journal.writeInputs(directory, prefix: "p", count: 3)
        let file = try journal.writePipeline(directory, cache: full.path)
        let journalFile = try journal.journalPath(file)
        try Data(repeating: UInt8(ascii: "\n"), count: 4096 - 40).write(to: URL(fileURLWithPath: journalFile))
        let filler = open(full.path + "/filler", O_WRONLY | O_CREAT, 0o644)
        let block = [UInt8](repeating: 1, count: 512)
        for _ in 0..<1024 where write(filler, block, block.count) > 0 {}
        close(filler)
        // When it runs, with --json
        let result = try CommandRunner.run(["run", "--json", file])
        // Then every output is made, and the run says the journal could not be written, naming
        // it and the reason, on standard error and in runFinished
        #expect(result.status == 0, "\(result.standardError)")
        let expected = "cannot write the journal \(journalFile): No space left on device: 6 outputs made but not recorded"
        #expect(result.standardError.contains("warning: " + expected), "\(result.standardError)")
        let last = try #require(result.standardOutput.split(separator: "\n").last)
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any])
        #expect((summary["warnings"] as? [String] ?? []).contains { $0.hasPrefix(expected) }, "\(last)")
        // And the journal holds no part of a record: read again, nothing in it is damaged
        let contents = try Data(contentsOf: URL(fileURLWithPath: journalFile))
        #expect(contents.allSatisfy { $0 == UInt8(ascii: "\n") }, "\(String(decoding: contents, as: UTF8.self))")
        let definition = try Pipeline(contentsOf: URL(fileURLWithPath: file), processors: .standard).definition
        #expect(OutputJournal(file: URL(fileURLWithPath: journalFile), definition: definition).warnings == [])
    }

    @Test func anUnterminatedLastLineIsDamagedNotARecord() throws {
        // Given a journal whose last record lost its newline (a write cut short)
        let directory = try TemporaryDirectory()
        try journal.writeInputs(directory, prefix: "p", count: 1)
        let file = try journal.writePipeline(directory)
        let journalFile = try journal.journalPath(file)
        let record = #"{"path":"/nowhere/x.jpg","fingerprint":"0","size":1,"modified":"0.0","width":1,"height":1}"#
        try FileManager.default.createDirectory(
            atPath: (journalFile as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data((record + "\n" + record).utf8).write(to: URL(fileURLWithPath: journalFile))
        // When it is read
        let definition = try Pipeline(contentsOf: URL(fileURLWithPath: file), processors: .standard).definition
        let read = OutputJournal(file: URL(fileURLWithPath: journalFile), definition: definition)
        // Then the unterminated line is counted as damaged
        #expect(read.warnings.count == 1 && read.warnings[0].contains("1 damaged line"), "\(read.warnings)")
    }

    @Test func aCacheEntryThatCannotBeWrittenIsAWarningOnceTheFolderWasFoundWritable() throws {
        // Given a remote input of noise (an entry of several pages), and a cache folder on a
        // full file system
        let photo = try Fixtures.jpeg(try Fixtures.noise(width: 96, height: 96))
        let server = try TestHTTPServer { _, _ in .init(status: 200, headers: ["ETag": "\"a\""], body: photo) }
        let full = try TemporaryMount(size: "64k")
        let filler = open(full.path + "/filler", O_WRONLY | O_CREAT, 0o644)
        defer { close(filler) }
        let block = [UInt8](repeating: 1, count: 512)
        for _ in 0..<1024 where write(filler, block, block.count) > 0 {}
        let directory = try TemporaryDirectory()
        let file = try journal.writePipeline(directory, glob: server.url("/a.jpg"), cache: full.path)
        // When it runs, the folder is found full before anything is fetched
        let told = try CommandRunner.run(["run", file])
        // Then the outputs are made, and one warning says so, not another for the entry
        #expect(told.status == 0, "\(told.standardError)")
        let cacheWarnings = told.standardError.split(separator: "\n").filter { $0.contains("cache") }
        #expect(cacheWarnings.count == 1, "\(told.standardError)")
        #expect(
            cacheWarnings.first?.hasPrefix("warning: cannot write in the cache folder \(full.path): No space left on device: ") == true
                && cacheWarnings.first?.contains("fetched inputs are not cached") == true, "\(told.standardError)")

        // When a page is free, the folder is found writable, and the entry does not fit
        #expect(photo.count > 2 * 4096)
        #expect(ftruncate(filler, max(0, lseek(filler, 0, SEEK_END) - 4096)) == 0)
        let result = try CommandRunner.run(["run", "--force", file])
        // Then the outputs are made, and a warning names the entry and the reason
        #expect(result.status == 0, "\(result.standardError)")
        #expect(!result.standardError.contains("cannot write in the cache folder"), "\(result.standardError)")
        #expect(result.standardError.contains("warning: cannot write the cache entry \(full.path)/"), "\(result.standardError)")
        #expect(result.standardError.contains(": No space left on device"), "\(result.standardError)")
    }
}
