import Foundation
import StandardProcessors
import TestSupport
import Testing
import Vips

@testable import PipelineKit

/// A full disk under `pipeline run`: exit status 1, and each failure names its output; a
/// read-only one is warned of when the file is checked.
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

    @Test func anOutputFolderThatCannotBeWrittenInIsWarnedOfByValidateOnceAFolder() throws {
        // Given outputs of two inputs into a read-only file system, one into a folder there and
        // one into a folder that would have to be made there
        let readOnly = try TemporaryMount.readOnly(holding: "existing")
        let directory = try TemporaryDirectory()
        for name in ["a", "b"] {
            try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 32, height: 24)), to: "in/\(name).jpg")
        }
        let pipeline = PipelineHarness.json(
            inputs: ["in/*.jpg"],
            outputs: [
                output("here", format: "jpeg", path: readOnly.path + "/existing/{stem}.jpg"),
                output("new", format: "jpeg", path: readOnly.path + "/new/{stem}.jpg"),
            ])
        let file = try directory.write(Data(pipeline.utf8), to: "pipeline.json")

        // When the file is checked
        let result = try CommandRunner.run(["validate", file])

        // Then it is valid (files already made there need no writing), with one warning for
        // each folder, naming the output, the folder and the reason
        #expect(result.status == 0, "\(result.standardError)")
        let warnings = result.standardError.split(separator: "\n").filter { $0.hasPrefix("warning: ") }
        #expect(
            warnings == [
                #"warning: outputs[0].path: output "here" of in/a.jpg would write \#(readOnly.path)/existing/a.jpg, "#
                    + #"but \#(readOnly.path)/existing cannot be written in (Read-only file system): its files fail unless they are up to date"#,
                #"warning: outputs[1].path: output "new" of in/a.jpg would write \#(readOnly.path)/new/a.jpg, "#
                    + #"but \#(readOnly.path) cannot be written in (Read-only file system): its files fail unless they are up to date"#,
            ], "\(result.standardError)")
    }

    /// A disk that takes nothing: read-only, or full (a full tmpfs still makes a file, and
    /// refuses its bytes).
    @Test(arguments: [true, false])
    func aRunWithEverythingUpToDateOnADiskThatTakesNothingSucceedsAndSaysNothingIsLost(readOnly: Bool) throws {
        // Given a pipeline with a manifest and a journal, run once whole and once in two shards
        // (their manifests merged), on a disk then made read-only, or filled
        var made: [CommandRunner.Result] = []
        let disk = try TemporaryMount(size: "1m", readOnly: readOnly) { path in
            let directory = URL(fileURLWithPath: path)
            try FileManager.default.createDirectory(at: directory.appendingPathComponent("in"), withIntermediateDirectories: true)
            for name in ["a", "b", "c"] {
                try Fixtures.jpeg(try Fixtures.gradient(width: 64, height: 48)).write(
                    to: directory.appendingPathComponent("in/\(name).jpg"))
            }
            let pipeline = PipelineHarness.json(
                inputs: ["in/*.jpg"],
                outputs: [
                    #"{"name": "small", "encode": {"format": "webp"}, "path": "out/{stem}.webp", "placeholders": ["dominantColor"]}"#
                ],
                extra: #""manifest": "out/manifest.json""#)
            try Data(pipeline.utf8).write(to: directory.appendingPathComponent("pipeline.json"))
            for arguments in [["run"], ["run", "--shard", "0/2"], ["run", "--shard", "1/2"], ["merge-manifests"]] {
                made.append(try CommandRunner.run(arguments + [path + "/pipeline.json"]))
            }
        }
        try #require(made.allSatisfy { $0.status == 0 }, "\(made.map(\.standardError))")
        if !readOnly {
            let filler = open(disk.path + "/filler", O_WRONLY | O_CREAT, 0o644)
            let block = [UInt8](repeating: 1, count: 4096)
            for _ in 0..<1024 where write(filler, block, block.count) > 0 {}
            close(filler)
        }
        let manifests = ["manifest.json", "manifest.shard-0-of-2.json", "manifest.shard-1-of-2.json"]
        let before = try manifests.map { try Data(contentsOf: URL(fileURLWithPath: disk.path + "/out/" + $0)) }

        // When it runs again, whole, as a shard, and merges the shards' manifests
        for arguments in [["run"], ["run", "--shard", "1/2"], ["merge-manifests"]] {
            let result = try CommandRunner.run(arguments + [disk.path + "/pipeline.json"])
            // Then each succeeds, and warns of no manifest or record lost
            #expect(result.status == 0, "\(arguments): \(result.standardError)")
            for lost in ["manifest", "journal", "cache folder", "not recorded"] {
                #expect(!result.standardError.contains(lost), "\(arguments): \(result.standardError)")
            }
        }
        let after = try manifests.map { try Data(contentsOf: URL(fileURLWithPath: disk.path + "/out/" + $0)) }
        #expect(after == before)
    }

    /// liborc maps the vector code libvips compiles from a file in `$XDG_RUNTIME_DIR` (or
    /// `$HOME`, …), sized without being written: on a full file system its first write there
    /// ended the process with SIGBUS and no word. The command goes on without that code.
    @Test func aFullFolderForLibvipsVectorCodeIsWarnedOfAndTheWorkDone() throws {
        // Given the folder liborc uses first, full
        let full = try TemporaryMount(size: "64k")
        let filler = open(full.path + "/filler", O_CREAT | O_WRONLY, 0o644)
        let chunk = [UInt8](repeating: 1, count: 4096)
        for _ in 0..<64 where write(filler, chunk, chunk.count) == chunk.count {}
        close(filler)
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 640, height: 480)), to: "in.jpg")

        // When a photo is made smaller, as libvips does with its vector code
        let result = try CommandRunner.run(
            ["convert", "in.jpg", "out.webp", "--width", "100"], in: directory.url, environment: ["XDG_RUNTIME_DIR": full.path])

        // Then it is, and a warning says why it was done without that code
        #expect(result.status == 0, "\(result.status): \(result.standardError)")
        #expect(try VipsImage.open(file: directory.path + "/out.webp").width == 100)
        #expect(
            result.standardError.contains("warning: \(full.path) ($XDG_RUNTIME_DIR) has 0 KiB free, too little for libvips"),
            "\(result.standardError)")
    }
}
