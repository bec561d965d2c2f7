import Foundation
import TestSupport
import Testing

@testable import PipelineKit

/// `ReportWriter.writeAtomically(to:unlessUnchanged:)`: a file that already holds the bytes is
/// left as it is, on a disk that can be written and on one that cannot.
@Suite struct UnchangedFileWriteTests {
    /// Writes `pieces` to `path` as the manifest's spool does, a piece at a time.
    func save(_ pieces: [String], to path: String) throws(ReportWriterError) {
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
        try save(["{\n  \"a\"", ": 1\n}", "\n"], to: path)
        // Then it is the same file, and no temporary file is left
        #expect(inode(path) == first)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["manifest.json"])
        // When bytes that differ, or that are a part or more of them, are written
        var previous = first
        for text in ["{\n  \"a\": 2\n}\n", "{\n  \"a\": 1\n", "{\n  \"a\": 1\n}\n\n"] {
            try save([text], to: path)
            // Then the file holds them, in a new file: made while the one it replaces was still
            // there, it cannot have its inode (an older one's may be given again)
            #expect(try String(contentsOfFile: path, encoding: .utf8) == text)
            #expect(inode(path) != previous)
            previous = inode(path)
        }
    }

    /// A disk that takes nothing: read-only, or full (a full tmpfs still makes a file, and
    /// refuses its bytes).
    @Test(.enabled(if: TemporaryMount.isSupported, "mounting a tmpfs needs root or CAP_SYS_ADMIN"), arguments: [true, false])
    func aDiskThatTakesNothingIsNoErrorForTheSameBytesOnly(readOnly: Bool) throws {
        // Given a file on a read-only file system, or a full one
        let text = "{\n  \"a\": 1\n}\n"
        let disk = try TemporaryMount(size: "64k", readOnly: readOnly) { path in
            try Data(text.utf8).write(to: URL(fileURLWithPath: path + "/manifest.json"))
        }
        if !readOnly {
            let filler = open(disk.path + "/filler", O_WRONLY | O_CREAT, 0o644)
            let block = [UInt8](repeating: 1, count: 4096)
            for _ in 0..<64 where write(filler, block, block.count) > 0 {}
            close(filler)
        }
        let path = disk.path + "/manifest.json"
        // When the same bytes are written, it is no error
        try save([text], to: path)
        // When other bytes are, the error names the file and the reason
        for other in ["{\n  \"a\": 2\n}\n", "{\n", text + "\n"] {
            #expect {
                try save([other], to: path)
            } throws: { error in
                let error = error as? ReportWriterError
                return error?.path == path && error?.reason == (readOnly ? "Read-only file system" : "No space left on device")
            }
        }
        #expect(try String(contentsOfFile: path, encoding: .utf8) == text)
    }
}
