import Foundation
import TestSupport
import Testing

@testable import PipelineKit

/// Input globs on a real folder: brace sets, case, the hints of "matches no files", and the
/// entries a glob skips because they are not regular files.
@Suite struct GlobTests {
    /// photos/a.jpg, photos/sub/b.png, photos/sub/deep/c.PNG, photos/D.JPG, photos/e.gif
    func photos() throws -> TemporaryDirectory {
        try Fixtures.globPhotos()
    }

    func enumerate(_ patterns: [String], in directory: TemporaryDirectory, caseInsensitive: Bool = false)
        -> InputEnumerator.Result<
            [InputFile]
        >
    {
        InputEnumerator(baseDirectory: directory.url, caseInsensitive: caseInsensitive).enumerate(
            patterns.map { .pattern($0) }, into: [])
    }

    @Test func braceSetsExpandAsFastGlobDoes() {
        #expect(InputEnumerator.braceAlternatives("photos/**/*.{jpg,png}") == ["photos/**/*.jpg", "photos/**/*.png"])
        #expect(InputEnumerator.braceAlternatives("{a,b{c,d}}.jpg") == ["a.jpg", "bc.jpg", "bd.jpg"])
        #expect(InputEnumerator.braceAlternatives("{x,y}/{1,2}") == ["x/1", "x/2", "y/1", "y/2"])
        #expect(InputEnumerator.braceAlternatives("{{a,b},c}") == ["a", "b", "c"])
        #expect(InputEnumerator.braceAlternatives("*.{jpg,}") == ["*.jpg", "*."])
        // Literal: no comma at the set's own level, escaped, or unclosed
        #expect(InputEnumerator.braceAlternatives("photo{1}.jpg") == ["photo{1}.jpg"])
        #expect(InputEnumerator.braceAlternatives(#"a\{b,c\}"#) == [#"a\{b,c\}"#])
        #expect(InputEnumerator.braceAlternatives("a{b,c") == ["a{b,c"])
        // Ranges of numbers, padded or stepped, and of letters of one case
        #expect(InputEnumerator.braceAlternatives("img{1..3}.jpg") == ["img1.jpg", "img2.jpg", "img3.jpg"])
        #expect(InputEnumerator.braceAlternatives("{08..10}") == ["08", "09", "10"])
        #expect(InputEnumerator.braceAlternatives("{3..1}") == ["3", "2", "1"])
        #expect(InputEnumerator.braceAlternatives("{1..10..4}") == ["1", "5", "9"])
        #expect(InputEnumerator.braceAlternatives("{-1..1}") == ["-1", "0", "1"])
        #expect(InputEnumerator.braceAlternatives("{a..c}") == ["a", "b", "c"])
        #expect(InputEnumerator.braceAlternatives("{C..A}") == ["C", "B", "A"])
        #expect(InputEnumerator.braceAlternatives("{a,{1..2}}/{x,y}") == ["a/x", "a/y", "1/x", "1/y", "2/x", "2/y"])
        #expect(InputEnumerator.braceAlternatives("{1..256}")?.count == 256)
        #expect(InputEnumerator.braceAlternatives("{1..257}") == nil)
        #expect(InputEnumerator.braceAlternatives("{1..999999999999999999}") == nil)
        // Not ranges, so literal: letters of two cases (glob characters lie between), a missing
        // end, a zero or wrong step, numbers too long to count
        for literal in ["{a..Z}", "{1..}", "{1..2..0}", "{1..2..x}", "{x..yz}", "{-9223372036854775808..9223372036854775807}"] {
            #expect(InputEnumerator.braceAlternatives(literal) == [literal])
        }
        // Bounded: five sets of three make 243 patterns, six make 729
        #expect(InputEnumerator.braceAlternatives(String(repeating: "{a,b,c}", count: 5))?.count == 243)
        #expect(InputEnumerator.braceAlternatives(String(repeating: "{a,b,c}", count: 6)) == nil)
    }

    @Test func aBraceSetMatchesEachOfItsChoicesWithOneRoot() throws {
        let directory = try photos()
        let result = enumerate(["photos/**/*.{jpg,png}"], in: directory)
        #expect(result.sink.map(\.displayName) == ["photos/a.jpg", "photos/sub/b.png"])
        // {dir} is below photos/, the folder every choice shares
        #expect(result.sink.map(\.subfolder) == ["", "sub"])
        #expect(result.warnings.isEmpty && result.problems.isEmpty)

        // Choices of folders, some literal, each file once even when two choices find it
        let folders = enumerate(["photos/{sub,sub/deep}/*.{png,PNG}", "photos/{a.jpg,none.jpg,a.jpg}"], in: directory)
        #expect(folders.sink.map(\.displayName) == ["photos/sub/b.png", "photos/sub/deep/c.PNG", "photos/a.jpg"])
        #expect(folders.sink.map(\.subfolder) == ["sub", "sub/deep", ""])

        let tooMany = enumerate([String(repeating: "{a,b,c}", count: 6)], in: directory)
        #expect(tooMany.sink.isEmpty && tooMany.problems.first?.message.contains("more than 256 patterns") == true)
    }

    @Test func aBraceRangeMatchesEachFolderInItWithOneRoot() throws {
        let directory = try TemporaryDirectory()
        for year in [2022, 2023, 2024] { try directory.write(Data("x".utf8), to: "photos/\(year)/p\(year).jpg") }
        let result = enumerate(["photos/{2023..2025}/*.jpg"], in: directory)
        #expect(result.sink.map(\.displayName) == ["photos/2023/p2023.jpg", "photos/2024/p2024.jpg"])
        #expect(result.sink.map(\.subfolder) == ["2023", "2024"])
        #expect(result.problems.isEmpty)
    }

    @Test func aGlobEndingInTwoStarsTakesEveryFileBelowAsFastGlobDoes() throws {
        // On a folder, as `photos/**/*` takes them, with the same subfolders for `{dir}`
        let directory = try photos()
        let below = enumerate(["photos/**"], in: directory)
        #expect(below.empty.isEmpty)
        #expect(below.sink.count == 5)
        let written = enumerate(["photos/**/*"], in: directory).sink
        #expect(below.sink.map(\.displayName) == written.map(\.displayName))
        #expect(below.sink.map(\.subfolder) == written.map(\.subfolder))
        // and among keys, as S3 lists them: no hidden folder, and nothing for no key
        #expect(InputEnumerator.matches(["**"], ["x.jpg"]) && InputEnumerator.matches(["**"], ["a", "b", "x.jpg"]))
        #expect(InputEnumerator.matches(["a", "**"], ["a", "x.jpg"]) && !InputEnumerator.matches(["a", "**"], ["a"]))
        #expect(!InputEnumerator.matches(["**"], [".git", "x.jpg"]) && !InputEnumerator.matches(["**"], []))
    }

    @Test func caseInsensitiveGlobsMatchNamesWhateverTheirCase() throws {
        let directory = try photos()
        #expect(
            enumerate(["photos/**/*.{jpg,png}"], in: directory, caseInsensitive: true).sink.map(\.displayName)
                == ["photos/D.JPG", "photos/a.jpg", "photos/sub/b.png", "photos/sub/deep/c.PNG"])
        // Literal components after the first wildcard too; the folder before it is opened as written
        #expect(
            enumerate(["photos/*/DEEP/*.png"], in: directory, caseInsensitive: true).sink.map(\.displayName) == ["photos/sub/deep/c.PNG"])
        #expect(enumerate(["photos/*/DEEP/*.png"], in: directory).sink.isEmpty)
    }

    @Test func matchesNoFilesSaysWhenCaseOrABraceSetWasMeant() throws {
        let directory = try photos()
        let upper = enumerate(["photos/*.JPG", "photos/*.jpeg"], in: directory)
        #expect(upper.sink.map(\.displayName) == ["photos/D.JPG"])
        let jpeg = try #require(upper.empty.first)
        #expect(jpeg.index == 1 && !jpeg.description.contains("ignoring case"), "\(jpeg.description)")

        let lower = enumerate(["photos/**/*.png"], in: directory)
        #expect(lower.sink.count == 1)
        let none = enumerate(["photos/*.JPEG", "photos/**/*.gif,png"], in: directory)
        #expect(none.empty.count == 2)
        let png = enumerate(["photos/sub/deep/*.png"], in: directory)
        #expect(
            png.empty.first?.description.contains(#"1 file matches it ignoring case ("caseInsensitive": true)"#) == true,
            "\(png.empty.first?.description ?? "")")
        #expect(png.warnings.contains { $0.contains("ignoring case") })
        #expect(
            none.empty[1].description.contains(#"several choices are a brace set, as in "photos/**/*.{jpg,png}""#),
            "\(none.empty[1].description)")
        #expect(!none.empty[0].description.contains("brace set") && !none.empty[0].description.contains("ignoring case"))
        // Ignoring case already: no such hint
        #expect(
            enumerate(["photos/*.tiff"], in: directory, caseInsensitive: true).empty.first?.description.contains("ignoring case") == false)
    }

    /// A glob's folder that is a link leading nowhere is named as such, not as missing.
    @Test(arguments: [("in", "a loop of symbolic links"), ("nowhere", "a symbolic link to nothing")])
    func aGlobsFolderThatIsABrokenLinkIsNamedSo(target: String, said: String) throws {
        let directory = try TemporaryDirectory()
        try FileManager.default.createSymbolicLink(atPath: directory.path + "/in", withDestinationPath: target)
        let empty = enumerate(["in/**/*.jpg"], in: directory).empty.first?.description ?? ""
        #expect(empty.contains(#""in/**/*.jpg" looks in the folder \#(directory.path)/in, which is \#(said)"#), "\(empty)")
    }

    @Test func entriesAGlobSkipsAreNamedInAWarning() throws {
        let directory = try photos()
        let folder = directory.path + "/photos"
        #expect(mkfifo(folder + "/pipe.jpg", 0o600) == 0)
        try FileManager.default.createSymbolicLink(atPath: folder + "/gone.jpg", withDestinationPath: folder + "/nowhere.jpg")
        try FileManager.default.createSymbolicLink(atPath: folder + "/loop.jpg", withDestinationPath: folder + "/loop.jpg")
        try FileManager.default.createSymbolicLink(atPath: folder + "/null.jpg", withDestinationPath: "/dev/null")
        try FileManager.default.createSymbolicLink(atPath: folder + "/linked.jpg", withDestinationPath: folder + "/a.jpg")

        let result = enumerate(["photos/*.jpg"], in: directory)
        #expect(result.sink.map(\.displayName) == ["photos/a.jpg", "photos/linked.jpg"])
        let warning = try #require(result.warnings.first { $0.contains("skips") })
        #expect(warning.hasPrefix(#"input "photos/*.jpg" skips 4 entries it cannot take as an input: "#), "\(warning)")
        for named in [
            "\(folder)/pipe.jpg (a FIFO)", "\(folder)/gone.jpg (a symbolic link to nothing)",
            "\(folder)/loop.jpg (a loop of symbolic links)", "\(folder)/null.jpg (a symbolic link to /dev/null, a character device)",
        ] {
            #expect(warning.contains(named), "\(named) in \(warning)")
        }
        // A pattern that meets none of them says nothing of the kind
        #expect(!enumerate(["photos/*.png", "photos/**/*.png"], in: directory).warnings.contains { $0.contains("skips") })

        // And a folder linked into the tree, which `**` does not go into and `*` goes through, is named
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 8, height: 8)), to: "camera/b.jpg")
        try FileManager.default.createSymbolicLink(atPath: folder + "/camera", withDestinationPath: "../camera")
        let deep = enumerate(["photos/**/*.png"], in: directory).warnings.first { $0.contains("skips") } ?? "none"
        #expect(deep.contains("\(folder)/camera (a symbolic link to a folder, which ** does not follow"), "\(deep)")
        #expect(enumerate(["photos/*/*.jpg"], in: directory).sink.map(\.displayName) == ["photos/camera/b.jpg"])
    }

    @Test func aLiteralPathToNoFileIsStillAnInputAndAWarning() throws {
        let directory = try photos()
        let result = enumerate(["photos/a.jpg", "photos/missing.jpg"], in: directory)
        #expect(result.sink.map(\.displayName) == ["photos/a.jpg", "photos/missing.jpg"])
        #expect(
            result.warnings == [#"input "photos/missing.jpg": there is no file photos/missing.jpg; it will fail when fetched"#],
            "\(result.warnings)")
        // and so is one that names a folder, with the glob that takes its files, or a FIFO
        #expect(mkfifo(directory.path + "/photos/pipe.jpg", 0o600) == 0)
        let named = enumerate(["photos", "photos/sub/", "photos/pipe.jpg"], in: directory)
        #expect(named.sink.count == 3)
        #expect(
            named.warnings == [
                #"input "photos": photos is a folder, not a file; it will fail when fetched. For the files in it, give a glob: "photos/**" (every file below) or "photos/*.jpg""#,
                #"input "photos/sub/": photos/sub is a folder, not a file; it will fail when fetched. For the files in it, give a glob: "photos/sub/**" (every file below) or "photos/sub/*.jpg""#,
                #"input "photos/pipe.jpg": photos/pipe.jpg is a FIFO, not a regular file; it will fail when fetched"#,
            ], "\(named.warnings)")
    }

    @Test func aFolderNamedLikeAnInputAndANameThatIsNotUTF8AreNamedNotPassedOver() throws {
        let directory = try photos()
        let folder = directory.path + "/photos"
        try FileManager.default.createDirectory(atPath: folder + "/x.jpg", withIntermediateDirectories: false)
        // "café.jpg" in Latin-1: no String holds this name, so nothing can open the file by one.
        for name in ["caf\u{E9}.jpg", "sub/caf\u{E9}"] {
            let bytes = Array((folder + "/").utf8) + name.unicodeScalars.map { UInt8($0.value) } + [0]
            let descriptor = bytes.withUnsafeBufferPointer { pointer in
                pointer.withMemoryRebound(to: CChar.self) {
                    name.hasPrefix("sub/") ? Int32(mkdir($0.baseAddress!, 0o755)) : open($0.baseAddress!, O_CREAT | O_WRONLY, 0o644)
                }
            }
            #expect(descriptor >= 0)
            if !name.hasPrefix("sub/") { close(descriptor) }
        }

        let result = enumerate(["photos/*.jpg", "photos/**/*.png"], in: directory)
        #expect(result.sink.map(\.displayName) == ["photos/a.jpg", "photos/sub/b.png"])
        let warnings = result.warnings.filter { $0.contains("skips") }
        #expect(
            warnings == [
                #"input "photos/*.jpg" skips 2 entries it cannot take as an input: "#
                    + "\(folder)/caf\u{FFFD}.jpg (a file whose name is not UTF-8 where \u{FFFD} stands, "
                    + "which a pipeline cannot name; rename it), "
                    + #"\#(folder)/x.jpg (a folder)"#,
                #"input "photos/**/*.png" skips 1 entry it cannot take as an input: "#
                    + "\(folder)/sub/caf\u{FFFD} (a folder whose name is not UTF-8 where \u{FFFD} stands, "
                    + "which a pipeline cannot name; rename it)",
            ], "\(warnings)")
        // `*` asks for folders too: it takes files and passes over folders without a word
        #expect(enumerate(["photos/*"], in: directory).warnings.allSatisfy { !$0.contains("x.jpg") })
    }

    @Test func pathsAlreadyNormalAreKeptAsTheyAre() {
        let normal = ["/a", "/a/b.jpg", "/a/.b", "/a/..b", "/a/b.", "/a/...", "/.../x", "/é/ñ.jpg"]
        let made = [
            "/": "/", "a/b": "/a/b", "/a//b": "/a/b", "/a/./b": "/a/b", "/a/../b": "/b", "/a/b/": "/a/b", "/a/.": "/a",
            "/a/..": "/", "//a": "/a", "/./a": "/a", "/../a": "/a",
        ]
        for path in normal {
            #expect(InputEnumerator.isNormalized(path), "\(path)")
            #expect(InputEnumerator.normalize(path) == path)
        }
        for (path, result) in made {
            #expect(!InputEnumerator.isNormalized(path), "\(path)")
            #expect(InputEnumerator.normalize(path) == result, "\(path)")
        }
    }
}

/// A file whose name holds a wildcard or a brace (`photo [1].jpg`, as downloads are named): a
/// pattern of the name as it is names another file, so the warning says how to name it.
extension GlobTests {
    @Test func aNameWithWildcardsIsNamedWithBackslashesAndTheWarningSaysSo() throws {
        // Given files named with a bracket, a star and a brace set
        let directory = try TemporaryDirectory()
        let names = ["photo [1].jpg", "q*.jpg", "a{1,2}.jpg", #"x\[y].jpg"#]
        for name in names { try directory.write(Data("x".utf8), to: "in/" + name) }
        for name in names {
            // When the name is written as it is: nothing matches, and the warning gives the pattern that names it
            let literal = Glob.literal("in/" + name)
            let asWritten = enumerate(["in/" + name], in: directory)
            if name != "q*.jpg" {
                #expect(asWritten.sink.isEmpty, "\(name)")
                #expect(
                    asWritten.warnings.contains { $0.contains("a file of exactly this name exists: put a backslash before each [, *, ?") },
                    "\(asWritten.warnings)")
            }
            // And with a backslash before each wildcard and brace, it names that file alone
            #expect(enumerate([literal], in: directory).sink.map(\.displayName) == ["in/" + name], "\(literal)")
        }
        // A backslash before any other character is part of the name, as it was
        try directory.write(Data("x".utf8), to: #"in/back\slash.jpg"#)
        #expect(enumerate([#"in/back\slash.jpg"#], in: directory).sink.map(\.displayName) == [#"in/back\slash.jpg"#])
        #expect(!InputEnumerator.isGlob(#"back\slash.jpg"#) && InputEnumerator.isGlob(#"a\[1].jpg"#) && InputEnumerator.isGlob(#"a\\b"#))
        // In a part with a wildcard too
        try directory.write(Data("x".utf8), to: "in/backslash.jpg")
        #expect(enumerate([#"in/back\s*.jpg"#], in: directory).sink.map(\.displayName) == [#"in/back\slash.jpg"#])
        #expect(InputEnumerator.matches(#"a\\b\*"#, #"a\b*"#) && !InputEnumerator.matches(#"a\\b\*"#, #"a\bc"#))
        #expect(InputEnumerator.matches(#"[x\y]z"#, #"\z"#) && InputEnumerator.matches(#"end\"#, #"end\"#))
    }
}
