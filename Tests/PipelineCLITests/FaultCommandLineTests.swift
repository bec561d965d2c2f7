import Foundation
import TestSupport
import Testing
import Vips

/// The command line against the faults of a hostile trial: outside numbers, writes aimed at the
/// inputs, pipeline files that are not files, signals.
@Suite(.serialized) struct FaultCommandLineTests {
    func writePipeline(_ directory: TemporaryDirectory, path: String = "out/{stem}.png", format: String = "png", extra: String = "") throws
        -> String
    {
        let photo = try Fixtures.jpeg(try Fixtures.gradient(width: 64, height: 48))
        for index in 0..<3 { try directory.write(photo, to: "in/dune-\(index).jpg") }
        let json = """
            {"version": 1, "inputs": ["in/*.jpg"]\(extra), "outputs": [
              {"name": "t", "steps": [{"resize": {"width": 16}}], "encode": {"format": "\(format)"}, "path": "\(path)"}]}
            """
        return try directory.write(Data(json.utf8), to: "p.json")
    }

    @Test func anOverflowingSchedulerVariableExitsWithTwoNamingItNotACrash() throws {
        let directory = try TemporaryDirectory()
        let file = try writePipeline(directory)
        for (name, value) in [("SLURM_ARRAY_TASK_MIN", "-9223372036854775808"), ("SLURM_ARRAY_TASK_ID", "-9223372036854775808")] {
            var environment = ["SLURM_ARRAY_TASK_ID": "1", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_COUNT": "4"]
            environment[name] = value
            let result = try CommandRunner.run(["validate", file], environment: environment)
            #expect(result.status == 2, "\(name): \(result.standardError)")
            #expect(result.standardError.contains(name), "\(result.standardError)")
        }
    }

    @Test func aNegativeShardSaysWhatIsWrongWithIt() throws {
        let directory = try TemporaryDirectory()
        let file = try writePipeline(directory)
        let result = try CommandRunner.run(["validate", "--shard", "-1/3", file])
        #expect(result.status == 2)
        #expect(!result.standardError.contains("Missing value"), "\(result.standardError)")
        #expect(result.standardError.contains("shard index -1"), "\(result.standardError)")
    }

    @Test func aPipelineFileThatIsAFIFOADeviceOrAFolderIsCalledWhatItIs() throws {
        let directory = try TemporaryDirectory()
        let fifo = directory.url.appendingPathComponent("p.fifo").path
        #expect(mkfifo(fifo, 0o600) == 0)
        try FileManager.default.createDirectory(at: directory.url.appendingPathComponent("folder.json"), withIntermediateDirectories: true)
        let cases = [
            (fifo, "a FIFO"), ("/dev/zero", "a character device"), (directory.url.appendingPathComponent("folder.json").path, "a folder"),
        ]
        for (path, kind) in cases {
            // Nothing writes to the FIFO: a read of it would block, so the answer shows it was not read.
            let result = try CommandRunner.run(["validate", path])
            #expect(result.status == 2, "\(path)")
            #expect(result.standardError.contains("it is \(kind)"), "\(path): \(result.standardError)")
            #expect(
                !result.standardError.contains("permission") && !result.standardError.contains("does not exist"), "\(result.standardError)")
        }
    }

    @Test func writesAimedAtTheInputsStopValidateAndRunWithTwoAndTouchNothing() throws {
        let directory = try TemporaryDirectory()
        // Given outputs into "alias", a link to the input folder
        try FileManager.default.createSymbolicLink(atPath: directory.path + "/alias", withDestinationPath: "in")
        let aliased = try writePipeline(directory, path: "alias/{stem}.jpg", format: "jpeg")
        let original = try Data(contentsOf: directory.url.appendingPathComponent("in/dune-1.jpg"))
        for command in ["validate", "run"] {
            let result = try CommandRunner.run([command, aliased])
            #expect(result.status == 2, "\(command): \(result.standardError)")
            #expect(result.standardError.contains("would overwrite the input in/dune-1.jpg"), "\(result.standardError)")
        }
        // Given a trace named as an input
        let plain = try writePipeline(directory)
        let traced = try CommandRunner.run(["run", "--quiet", "--trace", directory.path + "/in/dune-2.jpg", plain])
        #expect(traced.status == 2, "\(traced.standardError)")
        #expect(traced.standardError.contains("the trace (--trace) would overwrite the input in/dune-2.jpg"), "\(traced.standardError)")
        // Then every input is as it was
        for index in 0..<3 {
            #expect(try Data(contentsOf: directory.url.appendingPathComponent("in/dune-\(index).jpg")) == original)
        }
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/out"))
    }
}
