import Foundation
import StandardProcessors
import TestSupport
import Testing
import Vips

@testable import PipelineKit

/// Input names and folders that try to move outputs: nothing filled in from an input can place
/// a file outside the folder the author wrote; odd but harmless names just work.
@Suite struct HostilePathTests {
    func output(_ name: String, format: String = "webp", path: String) -> String {
        #"{"name": "\#(name)", "steps": [{"resize": {"width": 8}}], "encode": {"format": "\#(format)"}, "path": "\#(path)"}"#
    }

    @Test func aLiteralInputWithGlobCharactersIsReachedByEscapingThem() async throws {
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 32, height: 24)), to: "in/photo[1]*.jpg")
        let json = PipelineHarness.json(inputs: [#"in/photo\[1\]\*.jpg"#], outputs: [output("t", path: "out/{stem}.webp")])
        let (_, summary) = try await PipelineHarness.run(json, in: directory)
        #expect(summary.succeeded == 1)
        #expect(FileManager.default.fileExists(atPath: directory.path + "/out/photo[1]*.webp"))
    }

    @Test(arguments: ["...jpg", "....jpg"])
    func aStemOfDotsCannotClimbOutOfTheOutputFolder(name: String) throws {
        // Given an input whose stem is ".." or "..." and a template that uses it as a folder
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.solid(width: 8, height: 8)), to: "in/\(name)")
        let json = PipelineHarness.json(inputs: ["in/\(name)"], outputs: [output("t", path: "out/{stem}/x.webp")])
        let listing = try #require(try PipelineHarness.pipeline(json, in: directory).plan().items.first?.listings.first)
        // Then ".." is refused before the run, and "..." stays an ordinary folder name
        if name == "...jpg" {
            #expect(listing.refusal?.contains("would leave the output folder") == true)
            #expect(listing.targets.isEmpty)
            #expect(!FileManager.default.fileExists(atPath: directory.path + "/x.webp"))
        } else {
            let target = try #require(listing.targets.first)
            #expect(target.plannedPath == directory.path + "/out/.../x.webp")
        }
    }

    @Test func percentEscapesInNamesAreNotDecoded() throws {
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.solid(width: 8, height: 8)), to: "in/%2e%2e%2fescape.jpg")
        let json = PipelineHarness.json(inputs: ["in/*.jpg"], outputs: [output("t", path: "out/{stem}/x.webp")])
        let target = try #require(try PipelineHarness.pipeline(json, in: directory).plan().items.first?.listings.first?.targets.first)
        #expect(target.plannedPath == directory.path + "/out/%2e%2e%2fescape/x.webp")
    }

    @Test func aSymlinkToAFolderWhoseNameLooksTheSameInUnicodeIsRefused() throws {
        // Given an output folder "é" (composed) and, beside it, a different folder "é" spelled
        // decomposed (e + combining acute), which Swift strings call equal but the disk does not
        let directory = try TemporaryDirectory()
        let composed = "\u{e9}", decomposed = "e\u{301}"
        try FileManager.default.createDirectory(atPath: directory.path + "/\(composed)", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: directory.path + "/\(decomposed)", withIntermediateDirectories: true)
        // and a subfolder link inside the output folder pointing at the look-alike
        try FileManager.default.createSymbolicLink(
            atPath: directory.path + "/\(composed)/sub", withDestinationPath: directory.path + "/\(decomposed)")
        try directory.write(try Fixtures.jpeg(try Fixtures.solid(width: 8, height: 8)), to: "in/sub/a.jpg")
        let json = PipelineHarness.json(inputs: ["in/**/*.jpg"], outputs: [output("t", path: "\(composed)/{dir}/{stem}.webp")])
        // When it is planned (as validate and run do)
        // Then the write is refused before any work: the link leads outside the output folder
        #expect {
            _ = try PipelineHarness.pipeline(json, in: directory).plan()
        } throws: { error in
            "\(error)".contains("symbolic link") && "\(error)".contains("leads outside")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path + "/\(decomposed)").isEmpty)
    }

    @Test(arguments: [
        "/../\u{301}escaped.jpg",  // ".." then a slash carrying a combining mark: one Swift Character
        "/sub/../../escaped.jpg",
        "/./escaped.jpg",
        "/../escaped.jpg",
        "x/escaped.jpg",  // beside the root, sharing its name as a prefix
    ])
    func theWriterRefusesAPathThatTheKernelWouldResolveOutsideTheRoot(suffix: String) throws {
        // Given a root folder and a path that leaves it once the kernel splits it at every "/"
        let directory = try TemporaryDirectory()
        let root = directory.path + "/out"
        let path = root + suffix
        // When the writer is asked to write it
        #expect {
            _ = try ImageWriter.write(to: path, root: root) { descriptor throws(ItemError) in
                _ = write(descriptor, "x", 1)
            }
        } throws: { error in
            (error as? ItemError)?.stage == .encode && (error as? ItemError)?.reason.contains("would leave the output folder") == true
        }
        // Then nothing was created, not even a folder
        #expect(directory.allFiles().isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
    }

    @Test func aLongUnicodeNameGetsATemporaryFileThatFitsTheNameLimit() async throws {
        // Given an input whose output name is 250 bytes long (the limit is 255)
        let directory = try TemporaryDirectory()
        let stem = String(repeating: "日", count: 81) + "ab"  // 81 × 3 + 2 = 245 bytes
        try directory.write(try Fixtures.jpeg(try Fixtures.solid(width: 8, height: 8)), to: "in/\(stem).jpg")
        let json = PipelineHarness.json(inputs: ["in/*.jpg"], outputs: [output("t", path: "out/{stem}.webp")])
        // When it runs
        let (reports, _) = try await PipelineHarness.run(json, in: directory)
        // Then it is written (its temporary file's name was cut to fit)
        #expect(reports[0].succeeded, "\(reports[0].failures)")
        #expect(FileManager.default.fileExists(atPath: directory.path + "/out/\(stem).webp"))
        #expect(ImageWriter.temporaryName(for: stem + ".webp").utf8.count <= 255)
        #expect(ImageWriter.temporaryName(for: stem + ".webp").hasPrefix("." + String(repeating: "日", count: 10)))
    }

    @Test func anOutputPathThatIsALinkToTheFolderOfInputsIsNotReplaced() async throws {
        // Given inputs read through a symbolic link `in`, and an output whose path is that link
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.solid(width: 8, height: 8)), to: "photos/a.jpg")
        try FileManager.default.createSymbolicLink(atPath: directory.path + "/in", withDestinationPath: "photos")
        let json = PipelineHarness.json(inputs: ["in/*.jpg"], outputs: [output("t", format: "jpeg", path: "in")])
        // When it runs
        let (reports, _) = try await PipelineHarness.run(json, in: directory)
        // Then the output fails naming the link, which still leads to the photos, and no temporary file is left
        #expect(
            reports[0].failures.first?.reason == "\(directory.path)/in is a symbolic link to a folder: the file was not put in its place")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: directory.path + "/in") == "photos")
        #expect(!directory.allFiles().contains { $0.contains(ImageWriter.temporaryMarker) })
    }

    @Test func anOutputNameBeyondTheLimitFailsClearly() async throws {
        let directory = try TemporaryDirectory()
        let stem = String(repeating: "x", count: 245)
        try directory.write(try Fixtures.jpeg(try Fixtures.solid(width: 8, height: 8)), to: "in/\(stem).jpg")
        let json = PipelineHarness.json(inputs: ["in/*.jpg"], outputs: [output("t", path: "out/{stem}-too-long.webp")])
        let (reports, _) = try await PipelineHarness.run(json, in: directory)
        // Refused while planning, before any decode (the refusal is the first stage's)
        #expect(reports[0].failures.first?.stage == .fetch)
        #expect(reports[0].failures.first?.reason.contains("would be 259 bytes long: more than the 255") == true, "\(reports[0].failures)")
        #expect(!directory.allFiles().contains { $0.contains(ImageWriter.temporaryMarker) })
    }
}
