import Foundation
import PipelineKit
import TestSupport
import Testing
import Vips

/// `ulimit -f`: a write past the file size limit fails that output, by name, and leaves nothing.
@Suite struct FileSizeLimitCommandTests {
    /// SIGXFSZ, the signal of a file past `ulimit -f`, is ignored: the write fails instead, and
    /// the failure names its output while the run goes on.
    @Test func aFileSizeLimitFailsTheOutputPastItNotTheRun() throws {
        guard let binary = CommandRunner.unsanitizedExecutable(for: "dies of SIGBUS before main under a small ulimit -f") else { return }
        // Given a file size limit of 64 KiB, and a run whose one output is larger and another smaller
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.png(try Fixtures.noise(width: 300, height: 300)), to: "in/noise.png")
        let outputs = [
            #"{"name": "copy", "encode": {"format": "png"}, "path": "out/{stem}-copy.png"}"#,
            #"{"name": "small", "steps": [{"resize": {"width": 16}}], "encode": {"format": "png"}, "path": "out/{stem}-small.png"}"#,
        ]
        let file = try directory.write(Data(PipelineHarness.json(inputs: ["in/*.png"], outputs: outputs).utf8), to: "p.json")
        // When it runs
        let result = try CommandRunner.run(
            ["-c", #"ulimit -f 64 && exec "$0" run "$1""#, binary.path, file], executable: URL(fileURLWithPath: "/bin/bash"))
        // Then it exits 1 with the large output's failure named, the small output made, and no
        // temporary file left
        #expect(result.status == 1, "\(result.standardError)")
        // (libvips' own message has lost the system's reason: the writer probes for it)
        #expect(
            result.standardError.contains(
                "in/noise.png → copy: encode: cannot write \(directory.path)/out/noise-copy.png: File too large\n"),
            "\(result.standardError)")
        let written = try FileManager.default.contentsOfDirectory(atPath: directory.path + "/out")
        #expect(written == ["noise-small.png"], "\(written)")
    }

    /// Past `ulimit -f` a write is cut short before it fails: a tile pyramid that does not fit
    /// says the limit, not a full disk, and leaves nothing.
    @Test func aPyramidPastTheFileSizeLimitSaysTheLimit() throws {
        guard let binary = CommandRunner.unsanitizedExecutable(for: "dies of SIGBUS before main under a small ulimit -f") else { return }
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.png(try Fixtures.noise(width: 900, height: 700)), to: "in/noise.png")
        let pipeline = PipelineHarness.json(
            inputs: ["in/*.png"], outputs: [#"{"name": "zoom", "tiles": {"layout": "dz", "quality": 95}, "path": "out/{stem}.dzi"}"#])
        let file = try directory.write(Data(pipeline.utf8), to: "p.json")
        let result = try CommandRunner.run(
            ["-c", #"ulimit -f 36 && exec "$0" run "$1""#, binary.path, file], executable: URL(fileURLWithPath: "/bin/bash"))
        #expect(result.status == 1, "\(result.standardError)")
        #expect(
            result.standardError.contains("cannot write \(directory.path)/out/noise.dzi: File too large"), "\(result.standardError)")
        #expect(!directory.allFiles().contains { $0.hasPrefix("out/") }, "\(directory.allFiles())")
    }
}
