import Foundation
import TestSupport
import Testing
import Vips

@testable import PipelineCLI

/// `pipeline convert`'s flags: the decoder's limits, and the refusals that name a flag.
extension ConvertCommandTests {
    /// A convert in a scheduler's array task (each task converting its own photo) converts it:
    /// the task's index is no shard of a conversion, where 3 tasks of 4 made nothing, exit 0.
    @Test func aConvertInASchedulersArrayTaskIsWhole() throws {
        let directory = try prepare()
        for task in 0..<4 {
            let slurm = [
                "SLURM_ARRAY_TASK_ID": "\(task)", "SLURM_ARRAY_TASK_MIN": "0", "SLURM_ARRAY_TASK_MAX": "3",
                "SLURM_ARRAY_TASK_STEP": "1", "SLURM_ARRAY_TASK_COUNT": "4",
            ]
            let result = try CommandRunner.run(
                ["convert", "in/dune.jpg", "out/small-\(task).webp", "--width", "16"], in: directory.url, environment: slurm)
            #expect(result.status == 0 && !result.standardError.contains("shard"), "\(task): \(result.standardError)")
            #expect(try size(directory.path + "/out/small-\(task).webp").0 == 16)
        }
        // and from standard input to standard output
        let piped = try CommandRunner.run(
            ["convert", "-", "-", "--width", "16", "--format", "webp"], in: directory.url,
            environment: ["JOB_COMPLETION_INDEX": "3", "PIPELINE_SHARD_COUNT": "4"],
            standardInput: try Data(contentsOf: directory.url.appendingPathComponent("in/dune.jpg")))
        #expect(piped.status == 0 && piped.standardOutputData.starts(with: Data("RIFF".utf8)), "\(piped.standardError)")
    }

    /// An SVG is read only when named, as a pipeline file names it in `decompress.allowUntrusted`;
    /// the refusal names the flag, as a convert user has no file to set it in.
    @Test func allowUntrustedLetsAnSVGBeRead() throws {
        let directory = try prepare()
        let svg = #"<svg xmlns="http://www.w3.org/2000/svg" width="60" height="40"><rect width="60" height="40" fill="red"/></svg>"#
        try directory.write(Data(svg.utf8), to: "logo.svg")
        let refused = try CommandRunner.run(["convert", "logo.svg", "out/logo.png"], in: directory.url)
        #expect(refused.status == 1 && refused.standardError.contains(#"add "svg" to --allow-untrusted"#), "\(refused.standardError)")
        #expect(!refused.standardError.contains("decompress."), "\(refused.standardError)")
        // (in any case, as --format takes its names)
        let read = try CommandRunner.run(["convert", "logo.svg", "out/logo.png", "--allow-untrusted", "SVG"], in: directory.url)
        #expect(read.status == 0, "\(read.standardError)")
        #expect(try size(directory.url.appendingPathComponent("out/logo.png").path) == (60, 40))
        let unknown = try CommandRunner.run(["convert", "logo.svg", "out/x.png", "--allow-untrusted", "svgz"], in: directory.url)
        #expect(unknown.status == 2 && unknown.standardError.contains("--allow-untrusted"), "\(unknown.standardError)")
    }

    /// A file whose name starts with `-` is refused as read for options, saying how to name it,
    /// where `-hero.jpg` printed help and exited 0 (its `h`) and `-zz.jpg` said IN and OUT were
    /// missing; `./-zz.jpg` and `--` name it.
    @Test func aFileNamedLikeAnOptionIsRefusedSayingHowToNameIt() throws {
        let directory = try prepare()
        try FileManager.default.copyItem(atPath: directory.path + "/in/dune.jpg", toPath: directory.path + "/-hero.jpg")
        for arguments in [
            ["convert", "-hero.jpg", "out/"], ["convert", "--width", "50", "-hero.jpg", "out/"],
            // after a flag, which takes no value
            ["convert", "--print-pipeline", "-hero.jpg", "out/"],
        ] {
            let refused = try CommandRunner.run(arguments, in: directory.url)
            #expect(refused.status == 2, "\(refused.standardOutput)\(refused.standardError)")
            #expect(refused.standardError.contains("'-hero.jpg' is read as options"), "\(refused.standardError)")
            #expect(refused.standardError.contains("./-hero.jpg"), "\(refused.standardError)")
            #expect(refused.standardError.contains("put -- before it, after every option"), "\(refused.standardError)")
        }
        let named = try CommandRunner.run(["convert", "./-hero.jpg", "out/", "--width", "50"], in: directory.url)
        #expect(named.status == 0, "\(named.standardError)")
        let afterDashes = try CommandRunner.run(["convert", "--width", "40", "--", "-hero.jpg", "out/b.webp"], in: directory.url)
        #expect(afterDashes.status == 0, "\(afterDashes.standardError)")
        #expect(try size(directory.path + "/out/b.webp").0 == 40)
        // and a negative number, a value, is the parser's to judge
        #expect(PipelineCommand.fileNamedLikeAnOption(in: ["convert", "a.jpg", "b.jpg", "--position", "-0.5"]) == nil)
        // and html, whose INPUT is the manifest's name for an input, is told only of `--`
        #expect(
            PipelineCommand.fileNamedLikeAnOption(in: ["html", "m.json", "-hero.jpg"])
                == "error: '-hero.jpg' is read as options, not as a name: put -- before it, after every option")
    }

    /// OUT in a folder that cannot be written in is refused before anything is decoded, by OUT,
    /// where convert decoded and encoded, then failed, after a warning about `outputs[0].path`
    /// and files "up to date", which convert has none of.
    @Test(.enabled(if: TemporaryMount.isSupported, "needs a tmpfs mount (root or CAP_SYS_ADMIN)"))
    func anOUTThatCannotBeWrittenInIsRefusedByOUTBeforeTheRun() throws {
        let directory = try prepare()
        let readOnly = try TemporaryMount.readOnly(holding: "ro")
        let refused = try CommandRunner.run(["convert", "in/dune.jpg", readOnly.path + "/ro/x.webp", "--width", "50"], in: directory.url)
        #expect(refused.status == 2, "\(refused.standardError)")
        #expect(
            refused.standardError.contains("error: OUT: cannot write in \(readOnly.path)/ro: Read-only file system"),
            "\(refused.standardError)")
        #expect(!refused.standardError.contains("outputs[0]") && !refused.standardError.contains("up to date"), "\(refused.standardError)")
    }

    /// `--max-pixels` sets the decoder's limit, which a refusal names by the flag.
    @Test func maxPixelsSetsTheLimitARefusalNames() throws {
        let directory = try prepare()
        let refused = try CommandRunner.run(["convert", "in/dune.jpg", "out/dune.webp", "--max-pixels", "1000"], in: directory.url)
        #expect(refused.status == 1 && refused.standardError.contains("more than --max-pixels (1000)"), "\(refused.standardError)")
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/out/dune.webp"))
        let (width, height) = try size(directory.path + "/in/dune.jpg")
        let allowed = try CommandRunner.run(
            ["convert", "in/dune.jpg", "out/dune.webp", "--max-pixels", "\(width * height)"], in: directory.url)
        #expect(allowed.status == 0, "\(allowed.standardError)")
        let printed = try CommandRunner.run(
            ["convert", "in/dune.jpg", "out/x.webp", "--max-pixels", "5000", "--print-pipeline"], in: directory.url)
        #expect(printed.standardOutput.contains(#""maxPixels" : 5000"#), "\(printed.standardOutput)")
        for value in ["0", "lots"] {
            let wrong = try CommandRunner.run(["convert", "in/dune.jpg", "out/x.webp", "--max-pixels", value], in: directory.url)
            #expect(
                wrong.status == 2 && wrong.standardError.contains("error: --max-pixels: expected a positive integer"),
                "\(wrong.standardError)")
        }
        let tooMany = try CommandRunner.run(["convert", "in/dune.jpg", "out/x.webp", "--max-pixels", "9999999999"], in: directory.url)
        #expect(tooMany.status == 2 && tooMany.standardError.contains("error: --max-pixels: "), "\(tooMany.standardError)")
        // and a result too large for the limit names the flags that asked for it
        let huge = try CommandRunner.run(
            ["convert", "in/dune.jpg", "out/x.webp", "--width", "20000", "--height", "20000", "--fit", "fill"], in: directory.url)
        #expect(huge.status == 1 && huge.standardError.contains("the resize --width/--height ask for: "), "\(huge.standardError)")
        #expect(!huge.standardError.contains("steps[0]"), "\(huge.standardError)")
    }

    @Test func aFolderAsINIsRefusedWithAGlobToGiveInstead() throws {
        let directory = try prepare()
        for arguments in [["in", "out/"], ["in/", "out/", "--format", "webp"]] {
            let result = try CommandRunner.run(["convert"] + arguments, in: directory.url)
            #expect(result.status == 2, "\(result.standardError)")
            #expect(
                result.standardError.contains(#"IN: "\#(arguments[0])" is a folder: give a glob of its files, quoted, such as 'in/*.jpg'"#),
                "\(result.standardError)")
        }
        #expect(!directory.allFiles().contains { $0.hasPrefix("out/") })
    }

    @Test func aGlobMatchingNothingIsNamedAsINWithoutThePipelineFilesOption() throws {
        let directory = try prepare()
        let result = try CommandRunner.run(["convert", "in/*.png", "out/", "--format", "webp"], in: directory.url)
        #expect(result.status == 2)
        #expect(result.standardError.contains(#"IN: "in/*.png" matches no files"#), "\(result.standardError)")
        #expect(!result.standardError.contains("allowEmpty"), "\(result.standardError)")
        // and files that match it but for their case are pointed out without the file's key
        let cased = try CommandRunner.run(["convert", "in/*.JPG", "out/", "--format", "webp"], in: directory.url)
        #expect(cased.status == 2)
        #expect(cased.standardError.contains("match it ignoring case: write the glob in their case"), "\(cased.standardError)")
        #expect(!cased.standardError.contains("caseInsensitive"), "\(cased.standardError)")
        // and a glob whose extension is a typo, naming no format, is said as one that matches
        // nothing, not as a --format to give
        let typo = try CommandRunner.run(["convert", "in/*.jgp", "out/"], in: directory.url)
        #expect(typo.status == 2)
        #expect(typo.standardError.contains(#"IN: "in/*.jgp" matches no files"#), "\(typo.standardError)")
        #expect(!typo.standardError.contains("--format"), "\(typo.standardError)")
    }

    @Test func aGlobIntoOneFileIsRefused() throws {
        let directory = try prepare()
        let result = try CommandRunner.run(["convert", "in/*.jpg", "out/one.webp"], in: directory.url)
        #expect(result.status == 2)
        #expect(result.standardError.contains("OUT") && result.standardError.contains("glob"), "\(result.standardError)")
        #expect(!FileManager.default.fileExists(atPath: directory.url.appendingPathComponent("out").path))
    }

    /// The printed pipeline is valid against the schema and, run as a file, makes the same bytes.
    @Test func thePrintedPipelineRunAsAFileMakesTheSameBytes() throws {
        let directory = try prepare()
        let arguments = ["in/storm.jpg", "out/storm.jpg", "--width", "150", "--quality", "70", "--keep", "icc,exif"]
        let printed = try CommandRunner.run(["convert"] + arguments + ["--print-pipeline"], in: directory.url)
        #expect(printed.status == 0, "\(printed.standardError)")
        #expect(!FileManager.default.fileExists(atPath: directory.url.appendingPathComponent("out").path), "printing runs nothing")
        let file = try directory.write(Data(printed.standardOutput.utf8), to: "convert.json")

        let schema = try CommandRunner.run(["schema"])
        let schemaPath = try directory.write(Data(schema.standardOutput.utf8), to: "schema.json")
        #expect(try SchemaValidator.errorCounts(schema: schemaPath, documents: [file]) == [0])

        let converted = try CommandRunner.run(["convert"] + arguments, in: directory.url)
        #expect(converted.status == 0, "\(converted.standardError)")
        let out = directory.url.appendingPathComponent("out/storm.jpg")
        let first = try Data(contentsOf: out)
        try FileManager.default.removeItem(at: out)
        let run = try CommandRunner.run(["run", file])
        #expect(run.status == 0, "\(run.standardError)")
        #expect(try Data(contentsOf: out) == first)
    }

    @Test func badFlagsAreNamedByTheFlag() throws {
        let directory = try prepare()
        let cases: [([String], String)] = [
            (["--width", "abc"], #"--width: expected a positive integer, got "abc""#),
            (["--width", "-5"], #"--width: expected a positive integer, got "-5""#),
            (["--height", "-1"], #"--height: expected a positive integer, got "-1""#),
            (["--width", "10", "--fit", "cober"], #"--fit: "#),
            (["--quality", "500"], "--quality: "),
            (["--ssimulacra2", "-5"], "--ssimulacra2: "),
            (["--ssimulacra2", "0x50"], #"--ssimulacra2: expected a number, got "0x50""#),
            (["--ssimulacra2", "1e2"], #"--ssimulacra2: expected a number, got "1e2""#),
            (["--format", "bmpx"], "--format: "),
            (["--keep", ""], #"--keep: expected all, none or a list such as icc,exif, got """#),
            (["--keep", "all,icc"], "--keep: all stands alone, not in a list: give --keep all, or a list such as icc,exif"),
            (["--keep", "icc,"], #"--keep: expected all, none or a list such as icc,exif, got "icc,""#),
        ]
        for (flags, expected) in cases {
            let result = try CommandRunner.run(["convert", "in/storm.jpg", "out/x.webp"] + flags, in: directory.url)
            #expect(result.status == 2, "\(flags)")
            #expect(result.standardError.contains(expected), "\(flags): \(result.standardError)")
            #expect(!result.standardError.contains("outputs[0]"), "\(flags): \(result.standardError)")
        }
        let fit = try CommandRunner.run(["convert", "in/storm.jpg", "out/x.webp", "--width", "10", "--fit", "cober"], in: directory.url)
        #expect(fit.standardError.contains("cover"), "\(fit.standardError)")
    }

    /// OUT's extension is what the user wrote when no --format is given, so its problem names OUT.
    @Test func anExtensionNamingNoFormatIsNamedAsOUTs() throws {
        let directory = try prepare()
        let unknown = try CommandRunner.run(["convert", "in/storm.jpg", "out/x.xyz"], in: directory.url)
        #expect(unknown.status == 2)
        #expect(unknown.standardError.contains(#"OUT: "out/x.xyz" ends in .xyz"#), "\(unknown.standardError)")
        #expect(unknown.standardError.contains("--format") && !unknown.standardError.contains("--format: "), "\(unknown.standardError)")
        #expect(!FileManager.default.fileExists(atPath: directory.url.appendingPathComponent("out").path))
        // An extension in capitals, or another spelling of a format, names it
        let spelled = try CommandRunner.run(["convert", "in/storm.jpg", "out/x.JPEG", "--width", "20"], in: directory.url)
        #expect(spelled.status == 0, "\(spelled.standardError)")
        #expect(try VipsImage.open(file: directory.url.appendingPathComponent("out/x.JPEG").path).loader?.hasPrefix("jpegload") == true)
    }

    /// Where OUT names no format, IN's extension does: a URL's without its `;` parameters, as
    /// `{stem}` has none, and a glob's set of one format's spellings.
    @Test func theFormatOfINIsReadPastPathParametersAndFromASetOfSpellings() throws {
        #expect(ConvertDocument.format(ofInput: "https://example.com/a/dune.jpg;v=1?w=2") == .jpeg)
        #expect(ConvertDocument.format(ofInput: "in/*.{jpg,jpeg,JPG}") == .jpeg)
        for other in ["in/*.{jpg,png}", "in/*.{jpg,}", "in/*.jp?", "in/*.{jpg,j*}", "in/a.jpg,png"] {
            #expect(ConvertDocument.format(ofInput: other) == nil, "\(other)")
        }
        let directory = try prepare()
        try FileManager.default.moveItem(
            at: directory.url.appendingPathComponent("in/dune.jpg"), to: directory.url.appendingPathComponent("in/dune.jpeg"))
        let result = try CommandRunner.run(["convert", "in/*.{jpg,jpeg}", "out/", "--width", "20"], in: directory.url)
        #expect(result.status == 0, "\(result.standardError)")
        #expect(try size(directory.path + "/out/dune.jpg").0 == 20)
        #expect(try size(directory.path + "/out/storm.jpg").0 == 20)
    }

    /// A refusal that quotes a URL given as IN or OUT (where convert cannot write, and wrote a
    /// folder named `http:`) hides its secrets, as every message does.
    @Test func aRefusalQuotingAURLHidesItsSecrets() throws {
        let directory = try prepare()
        let url = "http://ann:hunter2@127.0.0.1:9/photo;jsessionid=SESSION?access_token=TOKEN"
        for arguments in [[url, "out/"], ["in/storm.jpg", url + ".jpg"]] {
            let result = try CommandRunner.run(["convert"] + arguments + ["--width", "20"], in: directory.url)
            #expect(result.status == 2, "\(arguments)")
            #expect(result.standardError.contains("http://…@127.0.0.1:9/photo;jsessionid=…?access_token=…"), "\(result.standardError)")
            for secret in ["hunter2", "SESSION", "TOKEN"] { #expect(!result.standardError.contains(secret), "\(result.standardError)") }
        }
    }

    @Test func qualityAndSsimulacra2AreExclusive() throws {
        let directory = try prepare()
        let result = try CommandRunner.run(
            ["convert", "in/storm.jpg", "out/x.webp", "--quality", "80", "--ssimulacra2", "70"], in: directory.url)
        #expect(result.status == 2)
        // One line naming the flag, as every other flag's mistake, not a usage block
        #expect(
            result.standardError == "error: --ssimulacra2: cannot be used with --quality: give a fixed quality or a target score\n",
            "\(result.standardError)")
    }

    /// A PNG's quality is its palette's, as in sharp; a TIFF's would be a lossy compression's.
    @Test func qualityMakesAPalettedPNGAndIsRefusedForTIFF() throws {
        let directory = try prepare()
        let png = try CommandRunner.run(["convert", "in/storm.jpg", "out/x.png", "--width", "60", "--quality", "50"], in: directory.url)
        #expect(png.status == 0, "\(png.standardError)")
        // The colour type in the PNG's header: 3 is a palette
        #expect(try Data(contentsOf: directory.url.appendingPathComponent("out/x.png"))[25] == 3)
        let tiff = try CommandRunner.run(["convert", "in/storm.jpg", "out/x.tif", "--quality", "50"], in: directory.url)
        #expect(tiff.status == 2)
        #expect(tiff.standardError.hasPrefix("error: --quality: convert writes a tiff without lossy compression"), "\(tiff.standardError)")
    }

    /// A file whose name has a wildcard in it, as a shell's completion passes it, is that file;
    /// a glob is a name that is no file.
    @Test func anINThatIsAFileWithWildcardsInItsNameIsThatFile() throws {
        let directory = try prepare()
        for name in ["photo [1].jpg", "a{1,2}.jpg", "b*.jpg"] {
            try FileManager.default.copyItem(atPath: directory.path + "/in/storm.jpg", toPath: directory.path + "/in/" + name)
        }
        for name in ["photo [1].jpg", "a{1,2}.jpg", "b*.jpg"] {
            let result = try CommandRunner.run(["convert", "in/" + name, "one.webp", "--width", "30"], in: directory.url)
            #expect(result.status == 0, "\(name): \(result.standardError)")
            #expect(try size(directory.path + "/one.webp").0 == 30)
        }
    }

    /// `{ext}` in OUT is IN's extension, so IN's format, as `{format}` leaves it to IN.
    @Test func anOUTEndingInExtKeepsINsFormat() throws {
        let directory = try prepare()
        let result = try CommandRunner.run(["convert", "in/storm.jpg", "e/{stem}.{ext}", "--width", "20"], in: directory.url)
        #expect(result.status == 0, "\(result.standardError)")
        #expect(try VipsImage.open(file: directory.path + "/e/storm.jpg").loader?.hasPrefix("jpegload") == true)
    }

    /// --position is a name or a point X,Y; a point that starts with a minus sign is a value, not a flag.
    @Test func aPositionIsANameOrAPoint() throws {
        let directory = try prepare()
        // A point is the resize's {"x", "y"}, and crops about it
        let point = try CommandRunner.run(
            ["convert", "in/storm.jpg", "out/p.webp", "--width", "100", "--height", "100", "--position", "0.2,0.7", "--print-pipeline"],
            in: directory.url)
        #expect(point.status == 0, "\(point.standardError)")
        let compact = point.standardOutput.filter { !$0.isWhitespace }
        #expect(compact.contains(#""position":{"x":0.2,"y":0.7}"#), "\(point.standardOutput)")
        let made = try CommandRunner.run(
            ["convert", "in/storm.jpg", "out/p.webp", "--width", "100", "--height", "100", "--position", "0.2,0.7"], in: directory.url)
        #expect(made.status == 0, "\(made.standardError)")
        #expect(try size(directory.path + "/out/p.webp") == (100, 100))
        // focus needs a file of points a conversion has not: it says to give the point
        for (value, expected) in [
            ("focus", "--position: focus reads a pipeline file's focusPoints; give the point itself as X,Y"),
            ("0.2,left", #"--position: expected a point X,Y of two numbers, got "0.2,left""#),
            ("nan,0.5", #"--position: expected a point X,Y of two numbers, got "nan,0.5""#),
            ("0.5,inf", #"--position: expected a point X,Y of two numbers, got "0.5,inf""#),
            ("bogus", #"--position: unknown value "bogus": expected one of "centre""#),
            ("-0.5,0.5", #"--position: X is -0.5 in "-0.5,0.5": a point's X and Y are from 0 to 1"#),
            ("0.5, 2", #"--position: Y is 2 in "0.5, 2": a point's X and Y are from 0 to 1"#),
        ] {
            let result = try CommandRunner.run(
                ["convert", "in/storm.jpg", "out/q.webp", "--width", "100", "--height", "100", "--position", value], in: directory.url)
            #expect(result.status == 2 && result.standardError.hasPrefix("error: \(expected)"), "\(value): \(result.standardError)")
        }
        // A position with one size, which keeps the aspect ratio and so crops nothing, is refused as with none
        for size in [["--width", "100"], ["--height", "100"], []] {
            let alone = try CommandRunner.run(
                ["convert", "in/storm.jpg", "out/q.webp"] + size + ["--position", "north"], in: directory.url)
            #expect(
                alone.status == 2 && alone.standardError.hasPrefix("error: --position: needs --width and --height"),
                "\(alone.standardError)")
        }
        // The names offered are those convert takes: a point, not focus
        let unknown = try CommandRunner.run(
            ["convert", "in/storm.jpg", "out/q.webp", "--width", "100", "--height", "100", "--position", "bogus"], in: directory.url)
        #expect(
            !unknown.standardError.contains(#""focus""#) && unknown.standardError.hasSuffix(", or a point X,Y\n"),
            "\(unknown.standardError)")
        // and a suggestion comes after the whole list, the point included
        let misspelt = try CommandRunner.run(
            ["convert", "in/storm.jpg", "out/q.webp", "--width", "100", "--height", "100", "--position", "centr"], in: directory.url)
        #expect(misspelt.standardError.hasSuffix(#", or a point X,Y; did you mean "centre"?"# + "\n"), "\(misspelt.standardError)")
    }

    @Test func aTargetScoreForAnAnimationIsRefusedByItsFlagBeforeAnyEncode() throws {
        let directory = try prepare()
        try directory.write(try HostileFixtures.animation("gif"), to: "in/moving.gif")
        // A glob over stills and an animation, into an animated format
        let refused = try CommandRunner.run(["convert", "in/*", "out/", "--format", "webp", "--ssimulacra2", "70"], in: directory.url)
        #expect(refused.status == 2, "\(refused.standardError)")
        #expect(
            refused.standardError
                == "error: --ssimulacra2: in/moving.gif is an animation of 3 frames, and a quality target scores still images: "
                + "give --quality instead\n", "\(refused.standardError)")
        #expect(!FileManager.default.fileExists(atPath: directory.url.appendingPathComponent("out").path))
        // Into a still format, the target scores the first frame; with a quality, every frame is kept
        let still = try CommandRunner.run(["convert", "in/moving.gif", "out/moving.jpg", "--ssimulacra2", "70"], in: directory.url)
        #expect(still.status == 0, "\(still.standardError)")
        let fixed = try CommandRunner.run(["convert", "in/moving.gif", "out/moving.webp", "--quality", "70"], in: directory.url)
        #expect(fixed.status == 0, "\(fixed.standardError)")
        let frames = try VipsImage.open(file: directory.path + "/out/moving.webp", options: "n=-1")
        #expect(frames.pageCount == 3)
        // and an animated AVIF, which libavif reads where libvips does not, is refused alike
        #expect(try CommandRunner.run(["convert", "in/moving.gif", "moving.avif", "--quality", "60"], in: directory.url).status == 0)
        let avif = try CommandRunner.run(["convert", "moving.avif", "out/m.webp", "--ssimulacra2", "70"], in: directory.url)
        #expect(avif.status == 2 && avif.standardError.hasPrefix("error: --ssimulacra2: moving.avif is an animation of 3 frames"))
    }

    @Test func aQualityTheFormatHasNotIsNamedByItsFlag() throws {
        let directory = try prepare()
        let cases: [([String], String)] = [
            (
                ["out/x.png", "--ssimulacra2", "80"],
                "--ssimulacra2: png has no quality to search for a score: a target is for avif, heic, jpeg, jxl, webp"
            ),
            (["out/x.tif", "--ssimulacra2", "80"], "--ssimulacra2: tiff has no quality"),
            (["out/x.gif", "--quality", "50"], "--quality: gif has no quality setting"),
            (["out/x", "--format", "gif", "--quality", "50"], "--quality: gif has no quality setting"),
        ]
        for (arguments, expected) in cases {
            let result = try CommandRunner.run(["convert", "in/storm.jpg"] + arguments, in: directory.url)
            #expect(result.status == 2, "\(arguments)")
            #expect(result.standardError.hasPrefix("error: \(expected)"), "\(arguments): \(result.standardError)")
            #expect(result.standardError.split(separator: "\n").count == 1, "\(arguments): \(result.standardError)")
        }
        #expect(!FileManager.default.fileExists(atPath: directory.url.appendingPathComponent("out").path))
        // --format takes an extension's spelling of a format, as OUT does
        let spelled = try CommandRunner.run(
            ["convert", "in/storm.jpg", "out/spelled", "--format", "JPG", "--ssimulacra2", "70", "--print-pipeline"], in: directory.url)
        #expect(spelled.status == 0 && spelled.standardOutput.contains(#""format" : "jpeg""#), "\(spelled.standardError)")
        // A PNG's quality (its palette's) is still taken
        let palette = try CommandRunner.run(
            ["convert", "in/storm.jpg", "out/x.png", "--quality", "60", "--width", "20"], in: directory.url)
        #expect(palette.status == 0, "\(palette.standardError)")
    }
}
