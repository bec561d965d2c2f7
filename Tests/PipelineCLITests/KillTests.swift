import Foundation
import TestSupport
import Testing
import Vips

/// `kill -9` at any moment never leaves a partial output, and the next run makes exactly what an
/// uninterrupted run makes, and leaves no temporary file behind.
@Suite(.serialized) struct KillTests {
    static let outputs = [
        #"{"name": "square", "steps": [{"resize": {"width": 200, "height": 200, "fit": "cover"}}], "encode": {"format": "webp", "quality": 80}, "path": "OUT/{stem}-square.webp"}"#,
        #"{"name": "large", "steps": [{"resize": {"width": 700, "height": 700, "fit": "inside"}}], "encode": {"format": "jpeg", "quality": 85}, "path": "OUT/{stem}-large.jpg"}"#,
        #"{"name": "tiny", "steps": [{"resize": {"width": 48}}, {"blur": {"sigma": 1}}], "encode": {"format": "png"}, "path": "OUT/{dir}/{stem}-tiny.png"}"#,
    ]

    /// Writes a pipeline file that reads `in/**/*.jpg` and writes into `folder`.
    func pipeline(writingTo folder: String, in directory: TemporaryDirectory) throws -> String {
        let json = PipelineHarness.json(
            inputs: ["in/**/*.jpg"], outputs: Self.outputs.map { $0.replacingOccurrences(of: "OUT", with: folder) })
        return try directory.write(Data(json.utf8), to: "\(folder).json")
    }

    /// Starts `pipeline run` on `file` with its output thrown away.
    func start(_ file: String) throws -> Process {
        try CommandRunner.start(["run", "--quiet", file])
    }

    func files(in folder: String) -> [String] {
        TemporaryDirectory.files(below: folder)
    }

    @Test func killedRunsThenOneMoreRunMakeTheSameBytesAsAnUninterruptedRun() throws {
        // Given 14 photos of different sizes (two in a subfolder), and two pipeline files that
        // differ only in where they write
        let directory = try TemporaryDirectory()
        let base = try Fixtures.gradient(width: 64, height: 48)
        for index in 0..<14 {
            let photo = try base.resized(horizontalScale: 9 + Double(index), verticalScale: 9 + Double(index), kernel: .lanczos3)
            try directory.write(try Fixtures.jpeg(photo), to: index < 2 ? "in/sub/photo-\(index).jpg" : "in/photo-\(index).jpg")
        }
        let cleanFile = try pipeline(writingTo: "clean", in: directory)
        let killedFile = try pipeline(writingTo: "killed", in: directory)

        // When one run goes through uninterrupted
        let clock = ContinuousClock()
        let started = clock.now
        let clean = try start(cleanFile)
        clean.waitUntilExit()
        let duration = clock.now - started
        try #require(clean.terminationStatus == 0)
        let cleanFiles = files(in: directory.path + "/clean")
        try #require(cleanFiles.count == 14 * 3)

        // and the other is killed with SIGKILL 24 times, at random moments of a run (seeded)
        var generator = SeededGenerator(seed: 20_240_601)
        let longest = Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
        var leftoversSeen = 0
        for _ in 0..<24 {
            let process = try start(killedFile)
            Thread.sleep(forTimeInterval: Double.random(in: 0...(longest * 1.1), using: &generator))
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            // Then after every kill, each file at an output path is whole: the clean run's bytes
            for file in files(in: directory.path + "/killed") {
                if file.contains(".pipeline-tmp-") { leftoversSeen += 1; continue }
                let killed = try Data(contentsOf: URL(fileURLWithPath: directory.path + "/killed/" + file))
                let expected = try Data(contentsOf: URL(fileURLWithPath: directory.path + "/clean/" + file))
                #expect(killed == expected, "\(file) is not the whole output after a kill")
            }
        }

        // When it is run once more, to the end
        let last = try start(killedFile)
        last.waitUntilExit()
        // Then every output matches the uninterrupted run byte for byte, and no temporary
        // file is left (the run removed those of the killed runs)
        #expect(last.terminationStatus == 0)
        let killedFiles = files(in: directory.path + "/killed")
        #expect(killedFiles == cleanFiles, "temporary files seen after kills: \(leftoversSeen)")
        for file in cleanFiles {
            let killed = try? Data(contentsOf: URL(fileURLWithPath: directory.path + "/killed/" + file))
            let expected = try Data(contentsOf: URL(fileURLWithPath: directory.path + "/clean/" + file))
            #expect(killed == expected, "\(file) differs from the uninterrupted run")
        }
    }
}
