import Foundation
import PipelineKit
import TestSupport
import Testing

/// An input that is a link to a device, or a FIFO, is named by the path the user gave, with
/// where a link leads and what it is, and is never read; so is any other file a run reads or
/// keeps (a profile, a focus file, a list, the manifest, the journal) that is not a regular file.
@Suite struct SpecialFileInputTests {
    @Test func aLinkToDevZeroIsNamedByItsOwnPathAndNeverRead() throws {
        // Given a link to /dev/zero named in the inputs, another one a glob finds, and a FIFO
        let directory = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: directory.path + "/in", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: directory.path + "/zero.jpg", withDestinationPath: "/dev/zero")
        try FileManager.default.createSymbolicLink(atPath: directory.path + "/in/z.jpg", withDestinationPath: "/dev/zero")
        #expect(mkfifo(directory.path + "/in/f.jpg", 0o600) == 0)
        let json = PipelineHarness.json(
            inputs: ["zero.jpg", "in/*.jpg"], outputs: [#"{"name": "t", "encode": {"format": "jpeg"}, "path": "out/{stem}.jpg"}"#])
        let file = try directory.write(Data(json.utf8), to: "pipeline.json")
        // When it runs
        let result = try CommandRunner.run(["run", file])
        // Then the named link fails as itself, saying where it leads and what that is
        #expect(result.status == 1)
        #expect(
            result.standardError.contains(
                "failed: zero.jpg: fetch: \(directory.path)/zero.jpg (a symbolic link to /dev/zero) is a character device, not a regular file"
            ),
            "\(result.standardError)")
        // And the glob's warning names the link and the FIFO by their paths
        #expect(
            result.standardError.contains("\(directory.path)/in/z.jpg (a symbolic link to /dev/zero, a character device)"),
            "\(result.standardError)")
        #expect(result.standardError.contains("\(directory.path)/in/f.jpg (a FIFO)"), "\(result.standardError)")
        // And explain, which reads headers, reads neither (a read of /dev/zero never ends) and names the link
        let explained = try CommandRunner.run(["explain", file])
        #expect(explained.status == 0, "\(explained.standardError)")
        #expect(
            explained.standardOutput.contains("  zero.jpg: fetch: it is a character device, not a regular file"),
            "\(explained.standardOutput)")
    }

    /// A FIFO, or a link to a device, where a command would write an output, the manifest, the
    /// trace, the report or a `<picture>` is refused and kept: renamed over, it would be gone for
    /// its reader, as `/dev/null` would be for every program.
    @Test func aFIFOOrALinkToADeviceWhereACommandWritesIsRefusedAndKept() throws {
        // Given FIFOs and links to /dev/null where a run would write each of its files
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 32, height: 24)), to: "in/a.jpg")
        for folder in ["out", "report", "html"] {
            try FileManager.default.createDirectory(atPath: directory.path + "/" + folder, withIntermediateDirectories: true)
        }
        for fifo in ["out/a.jpg", "trace.json", "report/report.json", "html/a.html"] {
            #expect(mkfifo(directory.path + "/" + fifo, 0o600) == 0)
        }
        for link in ["out/manifest.json", "null.jpg"] {
            try FileManager.default.createSymbolicLink(atPath: directory.path + "/" + link, withDestinationPath: "/dev/null")
        }
        let json = PipelineHarness.json(
            inputs: ["in/*.jpg"], outputs: [#"{"name": "t", "encode": {"format": "jpeg"}, "path": "out/{stem}.jpg"}"#],
            extra: #""manifest": {"path": "out/manifest.json"}"#)
        let file = try directory.write(Data(json.utf8), to: "p.json")
        // When it runs, the run and convert are refused before anything is written, naming each place
        let run = try bounded(["run", file, "--trace", directory.path + "/trace.json", "--report", directory.path + "/report"])
        #expect(run.status == 2, "\(run.standardError)")
        for (what, path, kind) in [
            ("output \"t\" of in/a.jpg", "out/a.jpg", "a FIFO (named pipe)"),
            ("the manifest", "out/manifest.json", "a symbolic link to a character device"),
            ("the trace (--trace)", "trace.json", "a FIFO (named pipe)"),
            ("the report (--report)", "report/report.json", "a FIFO (named pipe)"),
        ] {
            let said = "\(what) would replace \(directory.path)/\(path), which is \(kind): only a regular file is replaced"
            #expect(run.standardError.contains(said), "\(run.standardError)")
        }
        let converted = try bounded(["convert", directory.path + "/in/a.jpg", directory.path + "/null.jpg"])
        #expect(converted.status == 2)
        #expect(converted.standardError.contains("null.jpg, which is a symbolic link to a character device"), "\(converted.standardError)")
        // And html, given a manifest to read, refuses the FIFO where it would write a <picture>
        try FileManager.default.removeItem(atPath: directory.path + "/out/manifest.json")
        try FileManager.default.removeItem(atPath: directory.path + "/out/a.jpg")
        #expect(try bounded(["run", file]).status == 0)
        let html = try bounded(["html", directory.path + "/out/manifest.json", "--out", directory.path + "/html"])
        #expect(html.status == 1)
        #expect(
            html.standardError.contains("a.html: cannot write the <picture> of in/a.jpg: it is a FIFO (named pipe)"),
            "\(html.standardError)")
        // And every FIFO and link is still there, as it was
        for fifo in ["trace.json", "report/report.json", "html/a.html"] {
            var status = stat()
            #expect(lstat(directory.path + "/" + fifo, &status) == 0 && status.st_mode & S_IFMT == S_IFIFO, "\(fifo)")
        }
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: directory.path + "/null.jpg") == "/dev/null")
    }

    /// `/dev/stdout` is a link to `/proc/self/fd/1`, which leads to a regular file when standard
    /// output is one: renamed over, the link would be gone, and nothing written to the output.
    @Test func aLinkToStandardOutputWhereACommandWritesIsRefusedAndKept() throws {
        // Given links to the process's standard output where a run and convert would write
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 32, height: 24)), to: "in/a.jpg")
        for link in ["trace.json", "out.jpg", "manifest.json"] {
            try FileManager.default.createSymbolicLink(atPath: directory.path + "/" + link, withDestinationPath: "/proc/self/fd/1")
        }
        let json = PipelineHarness.json(
            inputs: ["in/*.jpg"], outputs: [#"{"name": "t", "encode": {"format": "jpeg"}, "path": "out/{stem}.jpg"}"#],
            extra: #""manifest": {"path": "manifest.json"}"#)
        let file = try directory.write(Data(json.utf8), to: "p.json")
        // When they run with standard output a regular file
        func status(_ arguments: [String]) throws -> (Int32, String) {
            let toFile = #"exec "$0" "$@" > captured.txt"#
            let result = try CommandRunner.run(
                ["-c", toFile, CommandRunner.executable.path] + arguments, in: directory.url, executable: URL(fileURLWithPath: "/bin/bash"))
            return (result.status, result.standardError)
        }
        let (run, runSaid) = try status(["run", file, "--trace", directory.path + "/trace.json"])
        let (convert, convertSaid) = try status(["convert", directory.path + "/in/a.jpg", directory.path + "/out.jpg"])
        // Then each is refused, naming where the link leads, and every link is still there
        #expect(run == 2 && convert == 2, "\(runSaid)\n\(convertSaid)")
        for said in [runSaid, convertSaid] {
            #expect(said.contains("which is a symbolic link to an open file of a process (/proc/"), "\(said)")
        }
        #expect(runSaid.contains("the manifest would replace"), "\(runSaid)")
        for link in ["trace.json", "out.jpg", "manifest.json"] {
            #expect(try FileManager.default.destinationOfSymbolicLink(atPath: directory.path + "/" + link) == "/proc/self/fd/1")
        }
    }

    /// A report, a trace or `<picture>` files are written on this machine: a bucket's address
    /// for one is refused, where it made a folder named `s3:` beside the run.
    @Test func aBucketsAddressForAFileWrittenHereIsRefused() throws {
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 32, height: 24)), to: "in/a.jpg")
        let json = PipelineHarness.json(
            inputs: ["in/*.jpg"], outputs: [#"{"name": "t", "encode": {"format": "jpeg"}, "path": "out/{stem}.jpg"}"#])
        let file = try directory.write(Data(json.utf8), to: "p.json")
        for (arguments, said) in [
            (["run", file, "--report", "s3://site/reports"], "--report s3://site/reports: the file is written on this machine"),
            (["run", file, "--trace", "s3://site/trace.json"], "--trace s3://site/trace.json: the file is written on this machine"),
            (["merge-reports", "--output", "s3://site/merged", directory.path], "--output s3://site/merged: the report is written"),
            (["html", directory.path + "/m.json", "--out", "s3://site/html"], "--out s3://site/html: the files are written"),
        ] {
            let result = try CommandRunner.run(arguments, in: directory.url)
            #expect(result.status == 2, "\(arguments): \(result.standardError)")
            #expect(
                result.standardError.contains(said + (arguments[0] == "run" ? ", so give a local path, not an S3 address" : "")),
                "\(result.standardError)")
        }
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/s3:"))
    }

    /// `pipeline ARGUMENTS`, ended by `timeout` after a minute: a command held by a FIFO's open
    /// is then status 124, not a test that never ends.
    func bounded(_ arguments: [String]) throws -> CommandRunner.Result {
        try CommandRunner.run(["60", CommandRunner.executable.path] + arguments, executable: URL(fileURLWithPath: "/usr/bin/timeout"))
    }

    @Test func aFIFOWhereTheFileReadsAProfileAFocusFileOrAListIsCalledWhatItIsAndHoldsNothing() throws {
        // Given FIFOs, with no writer, where a pipeline file names an ICC profile, a focus file
        // and a list of inputs
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 32, height: 24)), to: "in/a.jpg")
        for name in ["p.icc", "focus.json", "l.txt"] { #expect(mkfifo(directory.path + "/" + name, 0o600) == 0) }
        let cases: [(json: String, expected: String)] = [
            (
                PipelineHarness.json(
                    inputs: ["in/*.jpg"],
                    outputs: [#"{"name": "t", "encode": {"format": "jpeg", "iccProfile": "p.icc"}, "path": "out/{stem}.jpg"}"#]),
                "p.icc is neither srgb, p3 nor cmyk, nor a readable ICC file: it is a FIFO (named pipe), not a regular file"
            ),
            (
                PipelineHarness.json(
                    inputs: ["in/*.jpg"], outputs: [#"{"name": "t", "encode": {"format": "jpeg"}, "path": "out/{stem}.jpg"}"#],
                    extra: #""focusPoints": "focus.json""#),
                "cannot be read (it is a FIFO (named pipe), not a regular file)"
            ),
            (
                #"{"version": 1, "inputs": [{"list": "l.txt"}], "outputs": [{"name": "t", "encode": {"format": "jpeg"}, "path": "out/{stem}.jpg"}]}"#,
                "cannot read the input list l.txt: it is a FIFO (named pipe), not a regular file"
            ),
        ]
        for (json, expected) in cases {
            let file = try directory.write(Data(json.utf8), to: "p.json")
            // When the file is validated and run
            for command in ["validate", "run"] {
                let result = try bounded([command, file])
                // Then each refuses it at once, saying what stands there, and reads nothing
                #expect(result.status == 2, "\(command): \(result.standardError)")
                #expect(result.standardError.contains(expected), "\(command): \(result.standardError)")
            }
        }
    }

    @Test func aFIFOAtTheManifestsOrTheJournalsPathHoldsNoRun() throws {
        // Given a run with a manifest, made once so that its journal is there
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 32, height: 24)), to: "in/a.jpg")
        let json = PipelineHarness.json(
            inputs: ["in/*.jpg"], outputs: [#"{"name": "t", "encode": {"format": "png"}, "path": "out/{stem}.png"}"#],
            extra: #""manifest": {"path": "out/manifest.json"}"#)
        let file = try directory.write(Data(json.utf8), to: "p.json")
        #expect(try bounded(["run", file]).status == 0)
        let journal = try #require(directory.allFiles().first { $0.contains("journal") && $0.hasSuffix(".jsonl") })

        // When the manifest is a FIFO with no writer, the run ends: it is refused, not replaced
        try FileManager.default.removeItem(atPath: directory.path + "/out/manifest.json")
        #expect(mkfifo(directory.path + "/out/manifest.json", 0o600) == 0)
        let manifest = try bounded(["run", "--force", file])
        #expect(manifest.status == 2, "\(manifest.standardError)")
        #expect(
            manifest.standardError.contains("which is a FIFO (named pipe): only a regular file is replaced"), "\(manifest.standardError)")
        try FileManager.default.removeItem(atPath: directory.path + "/out/manifest.json")

        // When the journal is, the run ends too: refused, as a rewrite of the journal would replace it
        try FileManager.default.removeItem(atPath: directory.path + "/" + journal)
        #expect(mkfifo(directory.path + "/" + journal, 0o600) == 0)
        let recorded = try bounded(["run", "--force", file])
        #expect(recorded.status == 2, "\(recorded.standardError)")
        let said = "cache: the journal would replace \(directory.path)/\(journal), which is a FIFO (named pipe)"
        #expect(recorded.standardError.contains(said), "\(recorded.standardError)")
        var status = stat()
        #expect(lstat(directory.path + "/" + journal, &status) == 0 && status.st_mode & S_IFMT == S_IFIFO)
    }
}
