import Foundation
import TestSupport
import Testing

@testable import PipelineKit

/// `{hash}` in an output path, from the command line: each file is named by the SHA-256 of its
/// bytes, the manifest names it, an unchanged input is not made again, and a changed input's new
/// file replaces the old one, which the run removes.
@Suite struct HashedNameCommandTests {
    static let pipelineJSON = """
        {"version": 1, "name": "hashed", "inputs": ["photos/*.jpg"],
         "manifest": {"path": "public/manifest.json", "urlPrefix": "/img/"},
         "outputs": [
           {"name": "small", "steps": [{"resize": {"width": 40}}], "encode": {"format": "jpeg"}, "path": "public/{stem}-{hash}.jpg"},
           {"name": "tiny", "steps": [{"resize": {"width": 20}}], "encode": {"format": "png"}, "path": "public/{stem}.{hash:16}.png"}
         ]}
        """

    /// A file the pipeline did not write, named as a hashed one would be.
    static let notWritten = "a-0000000000.jpg"

    func prepare() throws -> TemporaryDirectory {
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 120, height: 80)), to: "photos/a.jpg")
        try directory.write(try Fixtures.jpeg(try Fixtures.redCorner(width: 100, height: 100)), to: "photos/b.jpg")
        try directory.write(Data(Self.pipelineJSON.utf8), to: "hashed.json")
        return directory
    }

    /// The run's summary counts: outputs written and found up to date.
    func run(_ directory: TemporaryDirectory, _ extra: [String] = []) throws -> (written: Int, upToDate: Int) {
        let result = try CommandRunner.run(["run", "--json"] + extra + [directory.url.appendingPathComponent("hashed.json").path])
        #expect(result.status == 0, "\(result.standardError)")
        let last = try #require(result.standardOutput.split(separator: "\n").last)
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any])
        return (summary["outputsWritten"] as? Int ?? -1, summary["outputsUpToDate"] as? Int ?? -1)
    }

    /// The image files in `public/`, each checked to be named by the hash of its bytes.
    func hashedFiles(_ directory: TemporaryDirectory) throws -> [String] {
        let files = TemporaryDirectory.files(below: directory.path + "/public").filter {
            !$0.hasPrefix("manifest") && $0 != Self.notWritten
        }
        for file in files {
            let digest = SHA256.hex(try Data(contentsOf: URL(fileURLWithPath: directory.path + "/public/" + file)))
            let expected = file.hasSuffix(".png") ? "." + digest.prefix(16) + ".png" : "-" + digest.prefix(10) + ".jpg"
            #expect(file.hasSuffix(expected), "\(file) is not named by its hash \(digest)")
        }
        return files
    }

    @Test func filesAreNamedByTheirBytesAndTheManifestNamesThem() throws {
        let directory = try prepare()
        #expect(try run(directory) == (4, 0))
        let files = try hashedFiles(directory)
        #expect(files.count == 4 && !files.contains { $0.contains("{") })
        let manifest = try ImageManifest.read(from: directory.url.appendingPathComponent("public/manifest.json"))
        let named = Set(manifest.inputs.flatMap { $0.outputs.values.flatMap { $0.formats.flatMap { $0.files.map(\.path) } } })
        #expect(named == Set(files))
    }

    @Test func anUnchangedInputIsSkippedAndForceMakesTheSameNames() throws {
        let directory = try prepare()
        #expect(try run(directory) == (4, 0))
        let first = try hashedFiles(directory)
        #expect(try run(directory) == (0, 4))
        #expect(try run(directory, ["--force"]) == (4, 0))
        #expect(try hashedFiles(directory) == first)
    }

    @Test func aChangedInputGetsANewNameAndItsOldFileIsRemoved() throws {
        let directory = try prepare()
        #expect(try run(directory) == (4, 0))
        let first = try hashedFiles(directory)
        // A file the pipeline did not write, named as a hashed one would be: never removed.
        try directory.write(Data("keep".utf8), to: "public/a-0000000000.jpg")
        try directory.write(try Fixtures.jpeg(try Fixtures.redCorner(width: 90, height: 60)), to: "photos/a.jpg")
        #expect(try run(directory) == (2, 2))
        let second = try hashedFiles(directory)
        #expect(second.count == 4)
        #expect(second.filter { $0.hasPrefix("b") } == first.filter { $0.hasPrefix("b") })
        #expect(Set(second.filter { $0.hasPrefix("a") }).isDisjoint(with: first))
        #expect(FileManager.default.fileExists(atPath: directory.path + "/public/a-0000000000.jpg"))
        #expect(try run(directory) == (0, 4))
    }

    /// A changed input now too narrow for some widths gets no file of them; their old files go too.
    @Test func widthsAChangedInputNoLongerGetsLoseTheirOldFiles() throws {
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 200, height: 100)), to: "photos/a.jpg")
        let json = """
            {"version": 1, "name": "widths", "inputs": ["photos/*.jpg"], "outputs": [
              {"name": "set", "widths": [40, 80, 160], "formats": ["webp"], "path": "public/{stem}-{width}.{hash}.{format}"}]}
            """
        let file = try directory.write(Data(json.utf8), to: "widths.json")
        #expect(try CommandRunner.run(["run", "--quiet", file]).status == 0)
        #expect(TemporaryDirectory.files(below: directory.path + "/public").count == 3)
        // When the input becomes 60 pixels wide: 40, and 60 for 80
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 60, height: 30)), to: "photos/a.jpg")
        let again = try CommandRunner.run(["run", "--quiet", file])
        #expect(again.status == 0, "\(again.standardError)")
        // Then only its two new files are left
        let files = TemporaryDirectory.files(below: directory.path + "/public").sorted()
        #expect(files.count == 2 && files[0].hasPrefix("a-40.") && files[1].hasPrefix("a-60."), "\(files)")
    }

    /// An old file the run reads (named as an input here; an overlay would be the same) stays,
    /// with a warning: the clean-up never takes away what the run was given.
    @Test func anOldFileTheRunReadsIsKept() throws {
        // Given a first run's files, a changed photo, and the photo's old small file named as an input
        let directory = try prepare()
        #expect(try run(directory) == (4, 0))
        let old = try #require(try hashedFiles(directory).first { $0.hasPrefix("a-") })
        try directory.write(try Fixtures.jpeg(try Fixtures.redCorner(width: 90, height: 60)), to: "photos/a.jpg")
        let json = Self.pipelineJSON.replacingOccurrences(of: #"["photos/*.jpg"]"#, with: #"["photos/*.jpg", "public/\#(old)"]"#)
        let file = try directory.write(Data(json.utf8), to: "hashed.json")
        // When it runs again
        let result = try CommandRunner.run(["run", "--quiet", file])
        // Then the old file is still there, and the run says why it kept it
        #expect(result.status == 0, "\(result.standardError)")
        #expect(FileManager.default.fileExists(atPath: directory.path + "/public/" + old))
        #expect(
            result.standardError.contains(
                "kept \(directory.path)/public/\(old), which a changed input's new {hash} file replaced: the run reads it, as the input public/\(old)"
            ), "\(result.standardError)")
    }

    @Test func shardedRunsRemoveNoOldFileAndAWholeRunDoes() throws {
        let directory = try prepare()
        #expect(try run(directory) == (4, 0))
        let first = try hashedFiles(directory)
        try directory.write(try Fixtures.jpeg(try Fixtures.redCorner(width: 90, height: 60)), to: "photos/a.jpg")
        for index in 0..<2 {
            let result = try CommandRunner.run(
                ["run", "--quiet", "--shard", "\(index)/2", directory.url.appendingPathComponent("hashed.json").path])
            #expect(result.status == 0, "\(result.standardError)")
        }
        let afterShards = try hashedFiles(directory)
        #expect(afterShards.count == 6 && Set(first).isSubset(of: afterShards))
        #expect(try run(directory) == (0, 4))
        let afterWhole = try hashedFiles(directory)
        #expect(afterWhole.count == 4 && Set(afterWhole).isSubset(of: afterShards))
    }

    @Test func anOutOfRangeHashLengthIsAValidateError() throws {
        let directory = try TemporaryDirectory()
        let json = Self.pipelineJSON.replacingOccurrences(of: "{hash:16}", with: "{hash:99}")
        let file = try directory.write(Data(json.utf8), to: "bad.json")
        let result = try CommandRunner.run(["validate", file])
        #expect(result.status != 0)
        #expect(
            result.standardError.contains("outputs[1].path") && result.standardError.contains("from 6 to 64"), "\(result.standardError)")
    }
}
