import Foundation
import TestSupport
import Testing

/// Folders a run may not read (no permission) are said to be skipped, never passed over as if
/// empty, and a symbolic link named as an input is not replaced by its output.
@Suite struct UnreadableFolderTests {
    @Test func aFolderTheRunCannotReadIsNamedAsSkipped() throws {
        // Given a tree of two photos, one in a folder only root may read, open to everyone else
        let directory = try TemporaryDirectory()
        let photo = try Fixtures.jpeg(try Fixtures.gradient(width: 32, height: 24))
        try directory.write(photo, to: "tree/open/1.jpg")
        try directory.write(photo, to: "tree/locked/2.jpg")
        for folder in ["", "/tree", "/tree/open"] { chmod(directory.path + folder, 0o777) }
        chmod(directory.path + "/tree/locked", 0o700)
        // When another user converts every photo of the tree
        guard let result = try CommandRunner.runAsNobody(in: directory.path, ["convert", "tree/**/*.jpg", "out/", "--width", "16"]) else {
            return
        }
        // Then the photo it can read is made, and the folder it cannot is named with why
        #expect(result.output.contains("tree/locked (a folder that cannot be read: Permission denied)"), "\(result.output)")
        #expect(FileManager.default.fileExists(atPath: directory.path + "/out/1.jpg"), "\(result.output)")
        // and a glob in that folder, or a file named in it, is said to be out of reach, not missing
        let glob = try CommandRunner.runAsNobody(in: directory.path, ["convert", "tree/locked/*.jpg", "out/"])
        #expect(
            glob?.output.contains("looks in \(directory.path)/tree/locked, a folder that cannot be read") == true, "\(glob?.output ?? "")")
        let below = try CommandRunner.runAsNobody(in: directory.path, ["convert", "tree/locked/deeper/*.jpg", "out/"])
        #expect(below?.output.contains("which cannot be reached: Permission denied") == true, "\(below?.output ?? "")")
        let named = try CommandRunner.runAsNobody(in: directory.path, ["convert", "tree/locked/2.jpg", "out/"])
        #expect(named?.output.contains(#""tree/locked/2.jpg" cannot be reached: Permission denied"#) == true, "\(named?.output ?? "")")
    }

    @Test func aSymbolicLinkNamedAsAnInputIsNotReplacedByItsOutput() throws {
        // Given link.jpg, a link to a photo
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 32, height: 24)), to: "real.jpg")
        try FileManager.default.createSymbolicLink(atPath: directory.path + "/link.jpg", withDestinationPath: "real.jpg")
        try FileManager.default.createSymbolicLink(atPath: directory.path + "/chain.jpg", withDestinationPath: "link.jpg")
        // When it is converted onto its own name, or a link to it onto that link
        let result = try CommandRunner.run(["convert", directory.path + "/link.jpg", directory.path + "/link.jpg", "--width", "16"])
        let chained = try CommandRunner.run(["convert", directory.path + "/chain.jpg", directory.path + "/link.jpg", "--width", "16"])
        // Then nothing is written, saying why, and the link is still a link
        for run in [result, chained] {
            #expect(run.status == 2, "\(run.standardError)")
            #expect(run.standardError.contains("a symbolic link the input"), "\(run.standardError)")
        }
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: directory.path + "/link.jpg") == "real.jpg")
    }
}
