import Foundation
import TestSupport
import Testing

@testable import PipelineKit

/// An input whose path is longer than the kernel takes (PATH_MAX) is found by the glob and
/// refused by name, as a failed input; it is never passed over in silence.
@Suite struct LongInputPathTests {
    /// Folders of 200 bytes each, nested deep enough that a file in the last passes 4096 bytes.
    static let folderName = String(repeating: "d", count: 200)
    static let depth = 22

    /// Makes `depth` nested folders under `root` and `name` in the deepest, each made relative to
    /// the one before (a path past PATH_MAX cannot be made whole); returns the file's path.
    static func makeDeepFile(under root: String, name: String, bytes: Data) throws -> String {
        var folder = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        try #require(folder >= 0)
        defer { close(folder) }
        var path = root
        for _ in 0..<depth {
            try #require(mkdirat(folder, folderName, 0o755) == 0)
            let next = openat(folder, folderName, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            try #require(next >= 0)
            close(folder)
            folder = next
            path += "/" + folderName
        }
        let file = openat(folder, name, O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
        try #require(file >= 0)
        defer { close(file) }
        let written = bytes.withUnsafeBytes { write(file, $0.baseAddress, $0.count) }
        try #require(written == bytes.count)
        return path + "/" + name
    }

    /// Removes what `makeDeepFile` made, deepest first, relative to each folder.
    static func removeDeepFile(under root: String, name: String) {
        var folders = [open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)]
        for _ in 0..<depth {
            guard let last = folders.last, last >= 0 else { break }
            folders.append(openat(last, folderName, O_RDONLY | O_DIRECTORY | O_CLOEXEC))
        }
        if let deepest = folders.last, deepest >= 0 { unlinkat(deepest, name, 0) }
        for index in stride(from: folders.count - 1, to: 0, by: -1) {
            close(folders[index])
            if folders[index - 1] >= 0 { unlinkat(folders[index - 1], folderName, AT_REMOVEDIR) }
        }
        if let first = folders.first, first >= 0 { close(first) }
    }

    @Test func aFileDeeperThanPathMaxIsRefusedByNameAndFailsTheRun() throws {
        // Given a JPEG whose path passes 4096 bytes, and one beside the pipeline file
        let directory = try TemporaryDirectory()
        let jpeg = try Fixtures.jpeg(try Fixtures.solid(width: 16, height: 16))
        try directory.write(jpeg, to: "in/near.jpg")
        let deep = try Self.makeDeepFile(under: directory.path + "/in", name: "deep.jpg", bytes: jpeg)
        defer { Self.removeDeepFile(under: directory.path + "/in", name: "deep.jpg") }
        #expect(deep.utf8.count > 4096)
        let json = PipelineHarness.json(
            inputs: ["in/**/*.jpg"], outputs: [#"{"name": "t", "encode": {"format": "jpeg"}, "path": "out/{stem}.jpg"}"#])
        let file = try directory.write(Data(json.utf8), to: "pipeline.json")
        // When it runs
        let result = try CommandRunner.run(["run", file])
        // Then the deep one fails, named by its ends, with the reason; the other is made
        #expect(result.status == 1, "\(result.standardError)")
        let shortened = "in/" + String(Self.folderName.prefix(57)) + "…" + String(Self.folderName.suffix(51)) + "/deep.jpg"
        let failures = result.standardError.split(separator: "\n").filter { $0.hasPrefix("failed:") }
        #expect(failures.count == 1, "\(result.standardError.prefix(2000))")
        #expect(
            failures.first?.hasPrefix("failed: \(shortened): fetch: refused: its path is \(deep.utf8.count) bytes long") == true,
            "\(failures)")
        #expect(!result.standardError.contains("matches no files"))
        #expect(result.standardOutput.contains("2 inputs, 1 succeeded, 1 failed"), "\(result.standardOutput)")
        #expect(result.standardError.utf8.count < 2_000)
        #expect(FileManager.default.fileExists(atPath: directory.path + "/out/near.jpg"))
    }

    @Test func aGlobMatchingOnlyAFileDeeperThanPathMaxDoesNotSayItMatchesNothing() throws {
        // Given only the deep file
        let directory = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: directory.path + "/in", withIntermediateDirectories: true)
        let jpeg = try Fixtures.jpeg(try Fixtures.solid(width: 16, height: 16))
        _ = try Self.makeDeepFile(under: directory.path + "/in", name: "deep.jpg", bytes: jpeg)
        defer { Self.removeDeepFile(under: directory.path + "/in", name: "deep.jpg") }
        let json = PipelineHarness.json(
            inputs: ["in/**/*.jpg"], outputs: [#"{"name": "t", "encode": {"format": "jpeg"}, "path": "out/{stem}.jpg"}"#])
        let file = try directory.write(Data(json.utf8), to: "pipeline.json")
        // When it runs, and is validated
        let result = try CommandRunner.run(["run", file])
        let validated = try CommandRunner.run(["validate", file])
        // Then the run fails for that input, and validate lists the refusal
        #expect(result.status == 1, "\(result.standardError)")
        #expect(!result.standardError.contains("matches no files"), "\(result.standardError)")
        #expect(result.standardOutput.contains("1 input, 0 succeeded, 1 failed"), "\(result.standardOutput)")
        // and no rate of images is given for a run that made none
        #expect(!result.standardOutput.contains("images/s"), "\(result.standardOutput)")
        #expect(validated.standardError.contains("deep.jpg: refused: its path is"), "\(validated.standardError)")
    }
}
