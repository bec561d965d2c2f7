import Foundation
import TestSupport
import Testing

@testable import PipelineCLI
@testable import PipelineKit

/// Names holding control characters reach the terminal escaped, as `--json` writes them: a file
/// name cannot print a line that passes for another failure, nor send escape sequences.
@Suite struct TerminalEscapeCommandTests {
    @Test func aFileNameWithANewlinePrintsOneFailureLineFromRunValidateAndExplain() throws {
        // Given an input named "x\nfailed: fake.jpg" that is not an image, and one with an escape sequence
        let directory = try TemporaryDirectory()
        try directory.write(Data("not an image".utf8), to: "in/x\nfailed: fake.jpg")
        try directory.write(Data("not an image".utf8), to: "in/y\u{1B}[2Jz.jpg")
        let json = PipelineHarness.json(
            inputs: ["in/*.jpg", "missing/*.jpg"],
            outputs: [
                #"{"name": "t", "steps": [], "encode": {"format": "jpeg"}, "path": "out/{stem}.jpg"}"#
            ])
        let file = try directory.write(Data(json.utf8), to: "pipeline.json")
        // When it runs
        let run = try CommandRunner.run(["run", "-v", file])
        // Then each input's failure is one line, with the name escaped, and no escape sequence reaches the terminal
        #expect(run.status == 1)
        let failures = run.standardError.split(separator: "\n").filter { $0.hasPrefix("failed:") }
        #expect(failures.count == 2, "\(run.standardError)")
        #expect(failures.contains { $0.hasPrefix(#"failed: in/x\nfailed: fake.jpg: "#) }, "\(failures)")
        #expect(failures.contains { $0.hasPrefix(#"failed: in/y\u001b[2Jz.jpg: "#) }, "\(failures)")
        #expect(!run.standardError.contains("\u{1B}[2J") && !run.standardOutput.contains("\u{1B}[2J"))
        // And explain prints each sample on one line, escaped
        let explain = try CommandRunner.run(["explain", file])
        #expect(
            explain.standardOutput.contains(#"  in/x\nfailed: fake.jpg: decompress: not an image libvips can read"#),
            "\(explain.standardOutput)")
        #expect(!explain.standardOutput.contains("\u{1B}"))
    }

    @Test func aProblemInThePipelineFileNamingAControlCharacterStaysOnOneLine() throws {
        // Given an output whose name holds a newline, used twice
        let directory = try TemporaryDirectory()
        try directory.write(Data("x".utf8), to: "in/a.jpg")
        let json = PipelineHarness.json(
            inputs: ["in/*.jpg"],
            outputs: [
                #"{"name": "a\nerror: fake", "steps": [], "encode": {"format": "jpeg"}, "path": "out/{stem}-1.jpg"}"#,
                #"{"name": "a\nerror: fake", "steps": [], "encode": {"format": "jpeg"}, "path": "out/{stem}-2.jpg"}"#,
            ])
        let file = try directory.write(Data(json.utf8), to: "pipeline.json")
        // When it is validated
        let result = try CommandRunner.run(["validate", file])
        // Then each of its problems (such a name is no part of a path, and it is used twice) is
        // one line, the name escaped
        #expect(result.status == 2)
        let lines = result.standardError.split(separator: "\n")
        #expect(lines.count == 3, "\(result.standardError)")
        #expect(lines.contains { $0.contains(#"output name "a\nerror: fake" is already used"#) }, "\(result.standardError)")
        #expect(!lines.contains { $0.hasPrefix("error: fake") }, "\(result.standardError)")
    }

    @Test func theSummaryAndHTMLsMessagesEscapeTheNamesTheyPrint() throws {
        // Given two photos in a folder whose name holds a newline, one named with an escape sequence
        let directory = try TemporaryDirectory()
        let photo = try Fixtures.jpeg(try Fixtures.gradient(width: 40, height: 30))
        try directory.write(photo, to: "in/x\nfailed: evil/a.jpg")
        try directory.write(photo, to: "in/x\nfailed: evil/y\u{1B}[2Jz.jpg")
        let json = PipelineHarness.json(
            inputs: ["in/**/*.jpg"],
            outputs: [#"{"name": "t", "steps": [], "encode": {"format": "jpeg"}, "path": "out/{dir}/{stem}.jpg"}"#],
            extra: #""manifest": {"path": "manifest.json"}"#)
        let file = try directory.write(Data(json.utf8), to: "pipeline.json")
        // When it runs, and html is asked for an input the manifest lacks
        let run = try CommandRunner.run(["run", file], in: directory.url)
        let html = try CommandRunner.run(["html", directory.path + "/manifest.json", "nosuch.jpg"])
        // Then no name prints a line of its own or sends an escape sequence
        #expect(run.status == 0, "\(run.standardError)")
        #expect(run.standardOutput.contains(#"outputs in out/x\nfailed: evil/"#), "\(run.standardOutput)")
        #expect(!run.standardOutput.split(separator: "\n").contains { $0.hasPrefix("failed:") }, "\(run.standardOutput)")
        #expect(html.status == 2, "\(html.standardError)")
        #expect(html.standardError.contains(#"y\u001b[2Jz.jpg"#), "\(html.standardError)")
        #expect(!html.standardError.contains("\u{1B}") && !run.standardOutput.contains("\u{1B}"))
    }

    @Test func aNameWithANewlineAndOneWithABackslashAndAnNPrintApart() throws {
        // Given two inputs that are not images: "a<newline>b.jpg" and "a\nb.jpg" (a backslash and an n)
        let directory = try TemporaryDirectory()
        try directory.write(Data("not an image".utf8), to: "in/a\nb.jpg")
        try directory.write(Data("not an image".utf8), to: #"in/a\nb.jpg"#)
        let json = PipelineHarness.json(
            inputs: ["in/*.jpg"],
            outputs: [#"{"name": "t", "steps": [], "encode": {"format": "jpeg"}, "path": "out/{stem}.jpg"}"#])
        let file = try directory.write(Data(json.utf8), to: "pipeline.json")
        // When it runs
        let run = try CommandRunner.run(["run", file])
        // Then the two failures name them differently, each as it is
        #expect(run.status == 1)
        let failures = run.standardError.split(separator: "\n").filter { $0.hasPrefix("failed:") }
        #expect(failures.count == 2, "\(run.standardError)")
        #expect(failures.contains { $0.hasPrefix(#"failed: in/a\nb.jpg: "#) }, "\(failures)")
        #expect(failures.contains { $0.hasPrefix(#"failed: in/a\\nb.jpg: "#) }, "\(failures)")
    }

    /// A log field's value from outside (a refused query's, in a reason) is quoted when it has a
    /// space, `=` or `"`, so that it cannot pass for more fields of its line.
    @Test func aLoggedValueThatLooksLikeFieldsIsQuoted() {
        func logged(_ text: String) -> String { EscapingLogHandler.field(text) }
        #expect(logged("/thumb/a.jpg") == "/thumb/a.jpg")
        #expect(logged(#"width " status=200 bytes=0"#) == #""width \" status=200 bytes=0""#)
        #expect(logged("a\nb c") == #""a\nb c""#)
    }
}
