import Foundation
import TestSupport
import Testing

/// A trace that cannot be written is said as the system says it, with its path; one, a report
/// or a manifest asked to land on a folder, or below a file, is refused before the run.
@Suite struct TraceWriteFailureTests {
    /// A folder not made yet is made, as the report's is.
    @Test func aTraceInAMissingFolderIsWrittenThere() throws {
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 64, height: 48)), to: "in/a.jpg")
        let outputs = [#"{"name": "t", "encode": {"format": "png"}, "path": "out/{stem}.png"}"#]
        let file = try directory.write(Data(PipelineHarness.json(inputs: ["in/*.jpg"], outputs: outputs).utf8), to: "pipeline.json")
        let trace = directory.path + "/missing/deeper/trace.json"
        let result = try CommandRunner.run(["run", "--trace", trace, file])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: trace))) is [String: Any])
    }

    @Test(.enabled(if: TemporaryMount.isSupported, "mounting a tmpfs needs root or CAP_SYS_ADMIN"))
    func aTraceThatCannotBeWrittenNamesThePathAndTheReason() throws {
        // Given a run whose trace goes to a folder on a read-only file system
        let readOnly = try TemporaryMount(size: "64k", readOnly: true)
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 64, height: 48)), to: "in/a.jpg")
        let file = try directory.write(
            Data(
                PipelineHarness.json(
                    inputs: ["in/*.jpg"],
                    outputs: [
                        #"{"name": "t", "encode": {"format": "png"}, "path": "out/{stem}.png"}"#
                    ]
                ).utf8), to: "pipeline.json")
        let trace = readOnly.path + "/missing/trace.json"
        // When it runs
        let result = try CommandRunner.run(["run", "--trace", trace, file])
        // Then it fails saying which file and why, without a Foundation error dump
        #expect(result.status == 1)
        #expect(
            result.standardError.contains("error: cannot write the trace to \(trace): cannot create the folder: Read-only file system"),
            "\(result.standardError)")
        // After the summary, which a file that cannot be written does not take along
        #expect(result.standardOutput.contains("1 input, 1 succeeded, 0 failed; 1 output written"), "\(result.standardOutput)")
        #expect(
            !result.standardError.contains("NSCocoaErrorDomain") && !result.standardError.contains("Error Domain"),
            "\(result.standardError)")
    }

    /// The folder for temporary files filling up during a run is named, with TMPDIR, where the
    /// trace's events (or the report's items) could not be kept: not the trace's own disk.
    @Test(.enabled(if: TemporaryMount.isSupported, "mounting a tmpfs needs root or CAP_SYS_ADMIN"))
    func aFolderForTemporaryFilesThatFillsIsNamed() throws {
        guard let binary = CommandRunner.unsanitizedExecutable(for: "dies of SIGBUS when the folder for temporary files is full") else {
            return
        }
        let temporary = try TemporaryMount(size: "96k", readOnly: false)
        let directory = try TemporaryDirectory()
        let photo = try Fixtures.jpeg(try Fixtures.gradient(width: 16, height: 12))
        for index in 0..<60 { try directory.write(photo, to: "in/p\(index).jpg") }
        let outputs = [#"{"name": "t", "steps": [{"resize": {"width": 8}}], "encode": {"format": "png"}, "path": "out/{stem}.png"}"#]
        let file = try directory.write(Data(PipelineHarness.json(inputs: ["in/*.jpg"], outputs: outputs).utf8), to: "pipeline.json")
        let result = try CommandRunner.run(
            ["run", "--report", directory.path + "/report", "--trace", directory.path + "/trace.json", file],
            environment: ["TMPDIR": temporary.path], executable: binary)
        #expect(result.status == 1)
        let said = "could not be kept in the folder for temporary files (\(temporary.path); TMPDIR sets it): No space left on device"
        #expect(result.standardError.contains(said), "\(result.standardError)")
    }

    @Test func aTraceReportOrManifestAtAFolderOrBelowAFileIsRefusedBeforeTheRun() throws {
        // Given a folder, a file, and a pipeline whose manifest goes where asked
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 64, height: 48)), to: "in/a.jpg")
        try FileManager.default.createDirectory(atPath: directory.path + "/folder", withIntermediateDirectories: false)
        try directory.write(Data("not a folder".utf8), to: "file")
        func pipeline(manifest: String) throws -> String {
            try directory.write(
                Data(
                    PipelineHarness.json(
                        inputs: ["in/*.jpg"], outputs: [#"{"name": "t", "encode": {"format": "png"}, "path": "out/{stem}.png"}"#],
                        extra: #""manifest": {"path": "\#(manifest)"}"#
                    ).utf8), to: "\(manifest).pipeline.json")
        }
        let file = try pipeline(manifest: "manifest.json")

        // When the trace is a folder, or the report's folder a file, or the manifest a folder
        let cases: [(arguments: [String], says: String)] = [
            (
                ["run", "--trace", directory.path + "/folder", file],
                "the trace (--trace) would be written to \(directory.path)/folder, which is a folder"
            ),
            (
                ["run", "--report", directory.path + "/file/report", file],
                "the report (--report) would be written to \(directory.path)/file/report/report.json, but \(directory.path)/file is a file"
            ),
            (
                ["validate", try pipeline(manifest: "folder")],
                "manifest.path: the manifest would be written to \(directory.path)/folder, which is a folder"
            ),
        ]
        for (arguments, says) in cases {
            let result = try CommandRunner.run(arguments)
            // Then it is refused before anything is made, naming the place and what is there
            #expect(result.status == 2, "\(arguments): \(result.standardError)")
            #expect(result.standardError.contains(says), "\(arguments): \(result.standardError)")
            #expect(!FileManager.default.fileExists(atPath: directory.path + "/out"), "\(arguments)")
        }
    }
}
