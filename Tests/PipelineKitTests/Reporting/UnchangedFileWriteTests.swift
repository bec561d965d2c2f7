import Foundation
import TestSupport
import Testing

@testable import PipelineKit

/// `ReportWriter.writeAtomically(to:unlessUnchanged:)`: a file that already holds the bytes is
/// left as it is, on a disk that can be written and on one that cannot.
@Suite struct UnchangedFileWriteTests {
    /// Writes `pieces` to `path` as the manifest's spool does, a piece at a time.
    func write(_ pieces: [String], to path: String) throws(ReportWriterError) {
        try ReportWriter.writeAtomically(to: path, unlessUnchanged: true) { write in
            pieces.allSatisfy { write(Data($0.utf8)) }
        }
    }

    func inode(_ path: String) -> ino_t {
        var info = stat()
        return stat(path, &info) == 0 ? info.st_ino : 0
    }

    @Test func theSameBytesLeaveTheFileAndOtherBytesReplaceIt() throws {
        // Given a file
        let directory = try TemporaryDirectory()
        let path = try directory.write(Data("{\n  \"a\": 1\n}\n".utf8), to: "manifest.json")
        let first = inode(path)
        // When the same bytes are written, in other pieces
        try write(["{\n  \"a\"", ": 1\n}", "\n"], to: path)
        // Then it is the same file, and no temporary file is left
        #expect(inode(path) == first)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["manifest.json"])
        // When bytes that differ, or that are a part or more of them, are written
        for text in ["{\n  \"a\": 2\n}\n", "{\n  \"a\": 1\n", "{\n  \"a\": 1\n}\n\n"] {
            try write([text], to: path)
            // Then the file holds them
            #expect(try String(contentsOfFile: path, encoding: .utf8) == text)
        }
        #expect(inode(path) != first)
    }

    @Test(.enabled(if: TemporaryMount.isSupported, "mounting a tmpfs needs root or CAP_SYS_ADMIN"))
    func aReadOnlyDiskIsNoErrorForTheSameBytesOnly() throws {
        // Given a file on a read-only file system
        let text = "{\n  \"a\": 1\n}\n"
        let disk = try TemporaryMount(size: "64k", readOnly: true) { path in
            try Data(text.utf8).write(to: URL(fileURLWithPath: path + "/manifest.json"))
        }
        let path = disk.path + "/manifest.json"
        // When the same bytes are written, it is no error
        try write([text], to: path)
        // When other bytes are, the error names the file and the reason
        for other in ["{\n  \"a\": 2\n}\n", "{\n", text + "\n"] {
            #expect {
                try write([other], to: path)
            } throws: { error in
                let error = error as? ReportWriterError
                return error?.path == path && error?.reason == "Read-only file system"
            }
        }
        #expect(try String(contentsOfFile: path, encoding: .utf8) == text)
    }
}
