import Foundation
import StandardProcessors
import TestSupport
import Testing
import Vips

@testable import PipelineKit

/// Output folders that cannot take the files: a full disk and a read-only file system fail the
/// outputs they affect, at encode, with the system's reason, and leave no partial file.
@Suite(.enabled(if: TemporaryMount.isSupported, "mounting a tmpfs needs root or CAP_SYS_ADMIN"))
struct OutputFileSystemTests {
    func output(_ name: String, steps: String = "[]", format: String, path: String) -> String {
        #"{"name": "\#(name)", "steps": \#(steps), "encode": {"format": "\#(format)"}, "path": "\#(path)"}"#
    }

    @Test func aFullDiskFailsTheOutputsThatDoNotFitAndLeavesNoPartialFile() async throws {
        // Given a 256 KiB file system, a small output and one of about 1.9 MB (noise as PNG)
        let disk = try TemporaryMount(size: "256k")
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.png(try Fixtures.noise(width: 800, height: 800)), to: "in/noise.png")
        let json = PipelineHarness.json(
            inputs: ["in/*.png"],
            outputs: [
                output("small", steps: #"[{"resize": {"width": 16}}]"#, format: "jpeg", path: disk.path + "/{stem}-small.jpg"),
                output("big", format: "png", path: disk.path + "/{stem}-big.png"),
            ])
        // When it runs
        let (reports, summary) = try await PipelineHarness.run(json, in: directory)
        // Then the small output is written, the big one fails at encode with the system's reason
        #expect(summary.failed == 1)
        let report = try #require(reports.first)
        #expect(report.written.map(\.output) == ["small"])
        let failure = try #require(report.failures.first)
        #expect(failure.output == "big")
        #expect(failure.stage == .encode)
        #expect(failure.reason.contains("No space left on device"), "\(failure.reason)")
        // And nothing partial or temporary is left on the full disk
        let files = try FileManager.default.contentsOfDirectory(atPath: disk.path)
        #expect(files == ["noise-small.jpg"])
        #expect(try VipsImage.open(file: disk.path + "/noise-small.jpg", options: "fail_on=warning").rendered().width == 16)
    }

    /// libvips' dzsave reports no tile it failed to write: a pyramid onto a full disk came out
    /// with tiles or its `.dzi` missing, was reported written and was taken as up to date after.
    @Test(arguments: ["dz", "iiif"]) func aPyramidThatDoesNotFitFailsAndLeavesNothing(layout: String) async throws {
        let disk = try TemporaryMount(size: "256k")
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.png(try Fixtures.noise(width: 900, height: 700)), to: "in/noise.png")
        let json = PipelineHarness.json(
            inputs: ["in/*.png"],
            outputs: [
                #"{"name": "zoom", "tiles": {"layout": "\#(layout)", "quality": 95}, "#
                    + #""path": "\#(disk.path)/{stem}\#(layout == "dz" ? ".dzi" : "")"}"#
            ])
        let (reports, summary) = try await PipelineHarness.run(json, in: directory)
        #expect(summary.failed == 1, "\(reports.flatMap(\.written))")
        let failure = try #require(reports.first?.failures.first)
        #expect(failure.stage == .encode)
        #expect(failure.reason.contains("No space left on device"), "\(failure.reason)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: disk.path).isEmpty)
    }

    @Test func aReadOnlyOutputFolderFailsEachOutputWithTheReason() async throws {
        // Given a read-only file system holding one existing folder
        let readOnly = try TemporaryMount.readOnly(holding: "existing")
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 64, height: 48)), to: "in/a.jpg")
        let json = PipelineHarness.json(
            inputs: ["in/*.jpg"],
            outputs: [
                output("here", format: "jpeg", path: readOnly.path + "/existing/{stem}.jpg"),
                output("new", format: "jpeg", path: readOnly.path + "/new/{stem}.jpg"),
                output("elsewhere", format: "jpeg", path: "out/{stem}.jpg"),
            ])
        // When it runs
        let (reports, _) = try await PipelineHarness.run(json, in: directory)
        // Then the outputs on the read-only file system fail at encode, saying so; the other is written
        let report = try #require(reports.first)
        #expect(report.written.map(\.output) == ["elsewhere"])
        let failures = Dictionary(uniqueKeysWithValues: report.failures.map { ($0.output ?? "", $0) })
        #expect(failures["here"]?.stage == .encode)
        #expect(failures["here"]?.reason == "cannot write in \(readOnly.path)/existing: Read-only file system")
        #expect(failures["new"]?.stage == .encode)
        #expect(failures["new"]?.reason == "cannot create the folder \(readOnly.path)/new: Read-only file system")
    }

    @Test func aWriteFailureLibvipsLostTheReasonOfIsSaidAsAFullDiskWhenNearlyFull() throws {
        // Given a small file system with room left (so the probe alone finds nothing wrong:
        // outputs that failed beside this one have freed their space)
        let disk = try TemporaryMount(size: "1m")
        let descriptor = open(disk.path + "/out.png", O_WRONLY | O_CREAT, 0o644)
        defer { close(descriptor) }
        // When libvips says its write failed, with the errno lost
        let lost = "wbuffer_write: write failed\nunix error: Unknown error -1\nvips2png: unable to write to target target"
        // Then it is a full disk, as when libvips said nothing (another thread's failure took
        // the message from its shared buffer); a failure that is not a write is not, nor an
        // encode that did not fail
        #expect(ImageWriter.spaceProblem(on: descriptor, encoderSaid: lost) == ENOSPC)
        #expect(ImageWriter.spaceProblem(on: descriptor, encoderSaid: "") == ENOSPC)
        #expect(ImageWriter.spaceProblem(on: descriptor, encoderSaid: "VipsJpeg: Corrupt JPEG data") == nil)
        #expect(ImageWriter.spaceProblem(on: descriptor, encoderSaid: nil) == nil)
    }
}
