import Foundation
import TestSupport
import Testing

/// An option that takes one value, given twice: the parser took the last, silently, so a shard
/// run on the wrong shard, and a width not the one meant, went by without a word.
@Suite struct RepeatedOptionTests {
    @Test func anOptionOfOneValueGivenTwiceIsRefusedNamingBoth() throws {
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 64, height: 48)), to: "in/a.jpg")
        try directory.write(
            Data(
                PipelineHarness.json(
                    inputs: ["in/*.jpg"], outputs: [#"{"name": "x", "encode": {"format": "webp"}, "path": "out/{stem}.webp"}"#]
                ).utf8),
            to: "p.json")

        let shard = try CommandRunner.run(["run", "p.json", "--shard", "0/2", "--shard", "1/3"], in: directory.url)
        #expect(shard.status == 2, "\(shard.standardError)")
        #expect(shard.standardError.contains(#"error: --shard is given twice ("0/2", then "1/3"): give it once"#), "\(shard.standardError)")
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/out"))
        // Written with "=" or without, it is the same option
        let width = try CommandRunner.run(["convert", "in/a.jpg", "out/a.png", "--width=100", "--width", "200"], in: directory.url)
        #expect(width.status == 2, "\(width.standardError)")
        #expect(width.standardError.contains(#"--width is given twice ("100", then "200")"#), "\(width.standardError)")
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/out"))
    }

    @Test func aFlagGivenTwiceIsNoRepeat() throws {
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 64, height: 48)), to: "in/a.jpg")
        // A flag means what it means once, and two options are two
        let quiet = try CommandRunner.run(
            ["convert", "in/a.jpg", "out/a.png", "--quiet", "-q", "--quiet", "--width", "32", "--height", "32"], in: directory.url)
        #expect(quiet.status == 0, "\(quiet.standardError)")
        #expect(FileManager.default.fileExists(atPath: directory.path + "/out/a.png"))
    }
}
