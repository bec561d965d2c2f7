import Foundation
import StandardProcessors
import TestSupport
import Testing
import Vips

@testable import PipelineKit

/// A full disk under `pipeline run`: exit status 1, and each failure names its output.
@Suite(.enabled(if: TemporaryMount.isSupported, "mounting a tmpfs needs root or CAP_SYS_ADMIN"))
struct OutputFileSystemCommandTests {
    func output(_ name: String, steps: String = "[]", format: String, path: String) -> String {
        #"{"name": "\#(name)", "steps": \#(steps), "encode": {"format": "\#(format)"}, "path": "\#(path)"}"#
    }

    @Test func aFullDiskDuringARunFromTheCommandLineExitsWithOneAndNamesTheOutput() throws {
        // Given a pipeline file whose outputs go to a 128 KiB file system
        let disk = try TemporaryMount(size: "128k")
        let directory = try TemporaryDirectory()
        for index in 0..<3 {
            try directory.write(try Fixtures.png(try Fixtures.noise(width: 300, height: 300)), to: "in/n\(index).png")
        }
        let pipeline = PipelineHarness.json(inputs: ["in/*.png"], outputs: [output("copy", format: "png", path: disk.path + "/{stem}.png")])
        let file = try directory.write(Data(pipeline.utf8), to: "pipeline.json")
        // When it runs (each output is about 270 KB)
        let result = try CommandRunner.run(["run", file])
        // Then it exits 1, each failure names its input, output, stage and the reason
        #expect(result.status == 1)
        #expect(result.standardError.contains("in/n0.png → copy: encode:"), "\(result.standardError)")
        #expect(result.standardError.contains("No space left on device"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: disk.path).isEmpty)
    }
}
