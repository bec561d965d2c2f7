import Foundation
import StandardProcessors
import TestSupport
import Testing
import Vips

@testable import PipelineKit

/// The decode-conformance files (Fixtures/Conformance: PngSuite, libpng's test and crasher
/// PNGs, libwebp's test vectors) through a real run: every file libvips itself reads, at the
/// same strictness, gives its PNG and WebP outputs; every file it refuses gets a clear error
/// naming the input and the stage, and no output. Nothing crashes.
@Suite struct DecodeConformanceTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/Conformance")

    /// Every PNG and WebP file under the folder, by its path there.
    static func files() throws -> [String] {
        let enumerator = FileManager.default.enumerator(atPath: folder.path)
        var files: [String] = []
        while let path = enumerator?.nextObject() as? String {
            if path.hasSuffix(".png") || path.hasSuffix(".webp") { files.append(path) }
        }
        return files.sorted()
    }

    /// Whether libvips decodes the whole file, as strict as `failOn`.
    static func libvipsReads(_ path: String, failOn: DecompressSettings.FailOn) -> Bool {
        guard let image = try? VipsImage.open(file: path, options: "fail_on=\(failOn.rawValue)") else { return false }
        return (try? image.rendered()) != nil
    }

    /// The strictness levels the test runs at, the most lenient first.
    static let strictness: [DecompressSettings.FailOn] = [.none, .truncated]

    /// For each file, the levels of `strictness` libvips reads it at, asked once for every test
    /// case: a few crasher files declare a chunk of a gigabyte, which libvips allocates and clears
    /// before it finds the file cut short. A file the most lenient level refuses, every stricter
    /// level refuses too, so it is asked no further.
    static let libvipsReadsAt: [String: Set<DecompressSettings.FailOn>] = {
        var verdicts: [String: Set<DecompressSettings.FailOn>] = [:]
        for file in (try? files()) ?? [] {
            let path = folder.appendingPathComponent(file).path
            var levels: Set<DecompressSettings.FailOn> = []
            for failOn in strictness {
                guard libvipsReads(path, failOn: failOn) else { break }
                levels.insert(failOn)
            }
            verdicts[file] = levels
        }
        return verdicts
    }()

    @Test func theSuiteIsThere() throws {
        let files = try Self.files()
        #expect(files.filter { $0.hasPrefix("pngsuite/") }.count >= 170)
        #expect(files.filter { $0.hasPrefix("libpng/") }.count >= 130)
        #expect(files.contains("libpng/crashers/empty_ancillary_chunks.png"))
        #expect(files.filter { $0.hasPrefix("libwebp/") }.count >= 100)
    }

    @Test(arguments: strictness)
    func everyFileLibvipsReadsGivesItsOutputsAndEveryOtherAClearError(failOn: DecompressSettings.FailOn) async throws {
        // Given every file, each under a name of its own in one folder
        let directory = try TemporaryDirectory()
        var names: [String: String] = [:]
        for file in try Self.files() {
            let name = file.replacingOccurrences(of: "/", with: "-")
            names[name] = file
            try directory.write(try Data(contentsOf: Self.folder.appendingPathComponent(file)), to: "in/\(name)")
        }
        let json = PipelineHarness.json(
            inputs: ["in/*"],
            outputs: [
                #"{"name": "png", "encode": {"format": "png"}, "path": "out/{name}.png"}"#,
                #"{"name": "webp", "steps": [{"resize": {"width": 16}}], "encode": {"format": "webp"}, "path": "out/{name}.webp"}"#,
            ], extra: #""decompress": {"failOn": "\#(failOn.rawValue)"}"#)
        // When they run together at that strictness
        let (reports, summary) = try await PipelineHarness.run(json, in: directory)
        #expect(summary.inputs == names.count)
        // Then each file libvips reads has both outputs, and each other file a clear error
        var failedButReadable: [String] = []
        for (name, file) in names.sorted(by: { $0.key < $1.key }) {
            let report = try #require(reports.first { $0.input.displayName == "in/\(name)" }, "\(file)")
            if Self.libvipsReadsAt[file, default: []].contains(failOn) {
                if !report.succeeded { failedButReadable.append("\(file): \(report.failures.map(\.reason))") }
                for ext in ["png", "webp"] where report.succeeded {
                    let output = try VipsImage.open(file: directory.path + "/out/\(name).\(ext)")
                    #expect(output.width > 0, "\(file) → \(ext)")
                }
            } else {
                let failure = report.failures.first
                #expect(failure != nil, "\(file): libvips refuses it, the pipeline wrote it")
                guard let failure else { continue }
                #expect(failure.input == "in/\(name)")
                #expect(failure.stage == .decompress || failure.stage == .fetch, "\(file): \(failure.stage)")
                #expect(!failure.reason.isEmpty, "\(file)")
                #expect(!FileManager.default.fileExists(atPath: directory.path + "/out/\(name).png"), "\(file)")
            }
        }
        #expect(failedButReadable.isEmpty, "libvips reads these, the pipeline failed: \(failedButReadable)")
        #expect(!directory.allFiles().contains { $0.contains(ImageWriter.temporaryMarker) })
    }
}
