import Foundation
import PipelineKit
import TestSupport
import Testing
import Vips

/// A run stopped by SIGTERM or Ctrl-C writes the manifest of what it finished before it exits,
/// so the manifest says what the files on disk are.
@Suite struct ManifestOnStopCommandTests {
    @discardableResult
    func writePipeline(_ directory: TemporaryDirectory, width: Int) throws -> String {
        let json = """
            {"version": 1, "inputs": ["in/*.png"], "manifest": {"path": "out/manifest.json"},
             "outputs": [{"name": "t", "steps": [{"resize": {"width": \(width)}}], "encode": {"format": "webp", "effort": 6}, "path": "out/{stem}.webp"}]}
            """
        return try directory.write(Data(json.utf8), to: "pipeline.json")
    }

    @Test(arguments: [(SIGTERM, Int32(143)), (SIGINT, Int32(130))])
    func aStoppedRunsManifestSaysTheWidthOfEveryFileOnDisk(signal: Int32, status: Int32) throws {
        // Given 60 images made 300 px wide, with a manifest
        let directory = try TemporaryDirectory()
        let image = try Fixtures.noise(width: 800, height: 600).encoded(suffix: ".png")
        for index in 0..<60 { try directory.write(image, to: "in/image-\(index).png") }
        let file = try writePipeline(directory, width: 300)
        #expect(try CommandRunner.run(["run", file]).status == 0)
        // When the width changes to 240 and the run is stopped after its first file
        try writePipeline(directory, width: 240)
        let started = Date()
        let command = try BackgroundCommand(["run", file])
        // (Its output is not a terminal, so its lines come in blocks: the files tell.)
        let deadline = Date(timeIntervalSinceNow: 60)
        while Date() < deadline,
            !directory.allFiles().contains(where: { name in
                name.hasSuffix(".webp")
                    && (try? FileManager.default.attributesOfItem(atPath: directory.path + "/" + name)[.modificationDate] as? Date).map {
                        $0 > started
                    } == true
            })
        {
            usleep(20_000)
        }
        command.signal(signal)
        #expect(command.waitForExit() == status, "\(command.transcript)")
        // Then every entry of the manifest gives the width its file has, some the new one
        let manifest = try ImageManifest.read(from: directory.url.appendingPathComponent("out/manifest.json"))
        var widths: [Int: Int] = [:]
        for input in manifest.inputs {
            for file in input.outputs["t"]?.formats.flatMap(\.files) ?? [] {
                let onDisk = try VipsImage.open(file: directory.path + "/out/" + (file.path as NSString).lastPathComponent)
                #expect(file.width == onDisk.width, "\(input.source): the manifest says \(file.width), the file is \(onDisk.width)")
                widths[file.width, default: 0] += 1
            }
        }
        #expect(widths[240, default: 0] >= 1, "the stopped run finished nothing: \(widths)")
        #expect(
            widths[300, default: 0] >= 1, "the stop came after the last input: the test proves nothing (\(widths)) \(command.transcript)")
    }
}
