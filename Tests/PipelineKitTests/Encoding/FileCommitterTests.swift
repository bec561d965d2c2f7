import Foundation
import TestSupport
import Testing

@testable import PipelineKit

/// Written files are flushed and renamed into place off the encode lanes, in batches
/// (`FileCommitter`): each lands whole under its own name, and a failure stays with its file.
@Suite struct FileCommitterTests {
    /// Writes `bytes` to `path` under its temporary name, not yet committed.
    static func uncommitted(_ bytes: [UInt8], to path: String, root: String) throws -> OutputWriter.Pending {
        let file = try ImageWriter.writeUncommitted(to: path, root: root) { descriptor throws(ItemError) in
            _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        }
        let output = WrittenOutput(output: "o", path: path, size: ImageSize(width: 1, height: 1), byteCount: file.byteCount)
        return OutputWriter.Pending(output: output, file: file)
    }

    @Test func filesCommittedTogetherAllLandWhole() async throws {
        let directory = try TemporaryDirectory()
        let committer = FileCommitter()
        let count = 40
        let pending = try (0..<count).map { index in
            try Self.uncommitted(
                [UInt8](repeating: UInt8(index), count: 1000 + index), to: directory.path + "/\(index).bin", root: directory.path)
        }
        // Written, not yet in place: only temporary files.
        #expect(directory.allFiles().allSatisfy { $0.contains(ImageWriter.temporaryMarker) })
        // Committed side by side, as the encode lanes hand them over.
        let written = try await withThrowingTaskGroup(of: WrittenOutput.self) { group in
            for file in pending { group.addTask { try await committer.commit(file) } }
            return try await group.reduce(into: [WrittenOutput]()) { $0.append($1) }
        }
        #expect(written.count == count)
        for index in 0..<count {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: directory.path + "/\(index).bin"))
            #expect(bytes == Data(repeating: UInt8(index), count: 1000 + index))
        }
        #expect(!directory.allFiles().contains { $0.contains(ImageWriter.temporaryMarker) })
    }

    @Test func aFileRenamedOverAnOutputAsItIsCommittedIsNotTakenForIt() async throws {
        // Given an output committed, and another process's file of the same size renamed over it
        // before the run records it
        let directory = try TemporaryDirectory()
        let path = directory.path + "/out.bin"
        let source = try directory.write(Data("source".utf8), to: "source.bin")
        let pending = try Self.uncommitted([UInt8](repeating: 1, count: 1000), to: path, root: directory.path)
        let committed = try await FileCommitter().commit(pending)
        let foreign = try directory.write(Data(repeating: 2, count: 1000), to: "foreign.bin")
        #expect(rename(foreign, path) == 0)
        // When the run records it and keeps its verdict, as it does next
        let definition = try PipelineHarness.pipeline(
            PipelineHarness.json(inputs: ["source.bin"], outputs: [#"{"name": "o", "encode": {"format": "png"}, "path": "out.bin"}"#]),
            in: directory
        ).definition
        let journalFile = directory.url.appendingPathComponent("journal.jsonl")
        let journal = OutputJournal(file: journalFile, definition: definition)
        journal.recordWritten(path, planned: path, fingerprint: "f", size: committed.size, committed: committed.committed)
        #expect(journal.finish() == [])
        var written = WrittenOutput(output: "o", path: path, size: committed.size, byteCount: committed.byteCount, fingerprint: "f")
        written.committed = committed.committed
        let report = ItemReport(
            input: InputFile(path: source, displayName: "source.bin", subfolder: ""), written: [written], failures: [], originalSize: nil)
        let verdict = OutputJournal.Verdict(input: try #require(FileStamp(path: source)), report: report)
        // Then neither the journal nor the verdict finds the other file up to date: it is made again
        #expect(OutputJournal(file: journalFile, definition: definition).upToDate(path, fingerprint: "f") == nil)
        #expect(verdict?.isUpToDate(path, inputPath: source) != true)
    }

    @Test func aFileThatCannotBeMovedIntoPlaceFailsAloneAndLeavesNothing() async throws {
        let directory = try TemporaryDirectory()
        // A folder with something in it where one output should go: it is not replaced.
        try directory.write(Data("x".utf8), to: "taken.bin/inside")
        let committer = FileCommitter()
        let good = try Self.uncommitted([1, 2, 3], to: directory.path + "/good.bin", root: directory.path)
        let blocked = try Self.uncommitted([4, 5, 6], to: directory.path + "/taken.bin", root: directory.path)
        async let goodResult = committer.commit(good)
        async let blockedResult: WrittenOutput = committer.commit(blocked)
        let written = try await goodResult
        #expect(written.path == directory.path + "/good.bin")
        do {
            _ = try await blockedResult
            Issue.record("the rename over a folder succeeded")
        } catch {
            let failure = error as? ItemError
            #expect(
                failure?.stage == .encode
                    && failure?.reason == "\(directory.path)/taken.bin is a folder: the file was not put in its place")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: directory.path + "/good.bin")) == Data([1, 2, 3]))
        #expect(!directory.allFiles().contains { $0.contains(ImageWriter.temporaryMarker) })
    }

    /// A FIFO, or a link to one, made where an output goes after the run was planned is not
    /// replaced: its reader would lose it, as every program would lose a device node.
    @Test(arguments: [false, true]) func aFIFOMadeWhereTheFileGoesIsNotReplaced(throughALink: Bool) async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/fifo.bin"
        let pending = try Self.uncommitted([1, 2, 3], to: path, root: directory.path)
        #expect(mkfifo(directory.path + "/pipe", 0o600) == 0)
        if throughALink {
            try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: "pipe")
        } else {
            try FileManager.default.moveItem(atPath: directory.path + "/pipe", toPath: path)
        }
        await #expect {
            _ = try await FileCommitter().commit(pending)
        } throws: { error in
            let kind = throughALink ? "a symbolic link to a FIFO (named pipe)" : "a FIFO (named pipe)"
            return (error as? ItemError)?.reason == "\(path) is \(kind): the file was not put in its place"
        }
        var status = stat()
        #expect(stat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFIFO)
        #expect(!directory.allFiles().contains { $0.contains(ImageWriter.temporaryMarker) })
    }

    /// The manifest, a report or a trace is not renamed over a FIFO either.
    @Test func aSideFileIsNotRenamedOverAFIFO() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/report.json"
        #expect(mkfifo(path, 0o600) == 0)
        #expect(throws: ReportWriterError.self) { try ReportWriter.writeAtomically(Data("{}".utf8), to: path) }
        var status = stat()
        #expect(lstat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFIFO)
        #expect(directory.allFiles() == ["report.json"], "left: \(directory.allFiles())")
    }

    @Test func aFileWhoseFolderIsMovedBeforeItsCommitFailsAndLeavesNothingInTheMovedFolder() async throws {
        let directory = try TemporaryDirectory()
        let written = try Self.uncommitted([7, 8, 9], to: directory.path + "/out/moved.bin", root: directory.path)
        // Someone moves the output folder away while the file waits for its commit.
        try FileManager.default.moveItem(atPath: directory.path + "/out", toPath: directory.path + "/elsewhere")
        do {
            _ = try await FileCommitter().commit(written)
            Issue.record("the file was committed into a folder that had moved away")
        } catch {
            #expect(error.stage == .encode)
            #expect(error.reason.hasPrefix("cannot move the finished file to \(directory.path)/out/moved.bin"), "\(error)")
        }
        #expect(directory.allFiles().isEmpty, "left: \(directory.allFiles())")
    }

    @Test func aDiscardedFileWhoseFolderWasMovedIsRemovedWhereItIsNow() throws {
        let directory = try TemporaryDirectory()
        let written = try Self.uncommitted([1], to: directory.path + "/out/gone.bin", root: directory.path)
        try FileManager.default.moveItem(atPath: directory.path + "/out", toPath: directory.path + "/elsewhere")
        written.file?.discard()
        #expect(directory.allFiles().isEmpty, "left: \(directory.allFiles())")
    }
}
