import Foundation
import StandardProcessors
import TestSupport
import Testing

@testable import PipelineKit

/// The pipeline file: every kind of mistake is found before any work, with its path and place.
@Suite struct PipelineFileTests {
    static let valid = """
        {
          "version": 1,
          "inputs": ["in/*.jpg"],
          "outputs": [
            {"name": "small", "steps": [{"resize": {"width": 320, "height": 320, "fit": "cover"}}],
             "encode": {"format": "webp", "quality": 80}, "path": "out/{stem}-small.webp"}
          ]
        }
        """

    func problems(_ json: String) -> [PipelineFileError.Problem] { PipelineHarness.problems(json) }

    /// The valid file with one substring replaced.
    func problems(replacing old: String, with new: String) -> [PipelineFileError.Problem] {
        #expect(Self.valid.contains(old), "test setup: \(old) not in the valid file")
        return problems(Self.valid.replacingOccurrences(of: old, with: new))
    }

    @Test func aValidFileLoadsWithDefaultsFilledIn() throws {
        let definition = try PipelineDefinition(json: Self.valid, baseDirectory: URL(fileURLWithPath: "/work"), processors: .standard)
        #expect(definition.outputs.count == 1)
        #expect(definition.outputs[0].encoder.format == .webp)
        #expect(definition.outputs[0].encoder.quality == 80)
        #expect(definition.outputs[0].encoder.effort == 4)
        #expect(definition.decompress.autorotate)
        #expect(definition.decompress.failOn == .truncated)
        #expect(definition.decompress.concurrency == StageDefaults.decompressConcurrency)
        #expect(
            definition.inFlight
                == StageDefaults.inFlight(
                    decompress: StageDefaults.decompressConcurrency, process: StageDefaults.processConcurrency,
                    encode: StageDefaults.encodeConcurrency))
        // Downloads add the fetch lanes, unless the file sets inFlight.
        #expect(
            definition.inFlightSetting == nil
                && definition.inFlight(fetchingRemoteInputs: true) == definition.inFlight + StageDefaults.fetchConcurrency)
        let set = try PipelineDefinition(
            json: Self.valid.replacingOccurrences(of: #""version": 1,"#, with: #""version": 1, "inFlight": 3,"#),
            baseDirectory: URL(fileURLWithPath: "/work"), processors: .standard)
        #expect(set.inFlightSetting == 3 && set.inFlight == 3 && set.inFlight(fetchingRemoteInputs: true) == 3)
        #expect(definition.baseDirectory.path == "/work")
    }

    @Test func misspeltKeySuggestsTheKnownOneWithPathAndLine() {
        let found = problems(replacing: "\"quality\": 80", with: "\"qualty\": 80")
        #expect(found.count == 1)
        #expect(found.first?.path == "outputs[0].encode.qualty")
        #expect(found.first?.location == SourceLocation(line: 6, column: 35))
        #expect(found.first?.message.contains("did you mean \"quality\"?") == true)
    }

    /// Which of two values was meant cannot be known: each key given again is named, with the
    /// object's path and where the first stands, all at once.
    @Test func everyKeyGivenTwiceIsNamedWithItsObjectsPath() {
        let found = problems(
            Self.valid.replacingOccurrences(of: #""width": 320,"#, with: #""width": 320, "width": 200,"#)
                .replacingOccurrences(of: #""quality": 80"#, with: #""quality": 80, "quality": 90"#))
        #expect(found.map(\.path) == ["outputs[0].steps[0].resize", "outputs[0].encode"], "\(found)")
        #expect(
            found.first?.message
                == #"the key "width" is given again (first at line 5, column 45): an object takes a key once; keep the one meant"#,
            "\(found)")
        #expect(found.last?.location == SourceLocation(line: 6, column: 50), "\(found)")
    }

    @Test func misspeltTopLevelKeyIsFound() {
        let found = problems(replacing: "\"inputs\"", with: "\"input\"")
        #expect(found.contains { $0.path == "input" && $0.message.contains("did you mean \"inputs\"?") && $0.location?.line == 3 })
        #expect(found.contains { $0.message.contains("missing required key \"inputs\"") })
    }

    @Test func outOfRangeValuesNameTheRange() {
        let quality = problems(replacing: "\"quality\": 80", with: "\"quality\": 200")
        #expect(quality.first?.path == "outputs[0].encode.quality")
        #expect(quality.first?.message.contains("out of range") == true)
        #expect(quality.first?.message.contains("1…100") == true)

        let width = problems(replacing: "\"width\": 320", with: "\"width\": -5")
        #expect(width.first?.path == "outputs[0].steps[0].resize.width")
        #expect(width.first?.location?.line == 5)

        // A colour's component past 255 is named where it stands
        let colour = problems(
            replacing: "\"format\": \"webp\", \"quality\": 80", with: "\"format\": \"jpeg\", \"background\": [1, 2, 300]")
        let component = colour.first { $0.path.hasPrefix("outputs[0].encode.background") }
        #expect(component?.path == "outputs[0].encode.background[2]", "\(colour)")
        #expect(component?.message == "300 is out of range: each of a colour's components is 0–255", "\(colour)")
    }

    /// A value sent as an HTTP header (an S3 object's Cache-Control and metadata, the server's
    /// Cache-Control) holds no line break: one would end the header and start another.
    @Test func aHeaderValueWithALineBreakIsRefusedAtItsPath() {
        let output =
            #"{"name": "t", "encode": {"format": "webp"}, "path": "s3://site/{stem}.webp", "cacheControl": "a\r\nX-Evil: 1", "metadata": {"owner": "b\nX-Evil: 1"}}"#
        let found = PipelineHarness.problems(
            PipelineHarness.json(inputs: ["in/*.jpg"], outputs: [output], extra: #""serve": {"cacheControl": "public\r\nX-Evil: 1"}"#))
        for path in ["outputs[0].cacheControl", "outputs[0].metadata.owner", "serve.cacheControl"] {
            let problem = found.first { $0.path == path }
            #expect(problem?.message == "must be printable ASCII on one line (it is sent as an HTTP header)", "\(path): \(found)")
        }
    }

    @Test func unknownEnumValueSuggestsTheNearest() {
        let found = problems(replacing: "\"fit\": \"cover\"", with: "\"fit\": \"cver\"")
        #expect(found.first?.path == "outputs[0].steps[0].resize.fit")
        #expect(found.first?.message.contains("did you mean \"cover\"?") == true)
    }

    @Test func unknownFormatAndStepSuggestTheNearest() {
        #expect(
            problems(replacing: "\"format\": \"webp\"", with: "\"format\": \"jpg\"").first?.message.contains("did you mean \"jpeg\"?")
                == true)
        let step = problems(replacing: "{\"resize\":", with: "{\"resise\":")
        #expect(step.first?.path == "outputs[0].steps[0].resise")
        #expect(step.first?.message.contains("did you mean \"resize\"?") == true)
    }

    @Test func optionsOfAnotherFormatAreUnknownKeys() {
        let found = problems(replacing: "\"quality\": 80", with: "\"quality\": 80, \"progressive\": true")
        #expect(found.first?.path == "outputs[0].encode.progressive")
        #expect(found.first?.message.contains("unknown key") == true)
    }

    @Test func wrongTypesSayWhatWasExpectedAndFound() {
        let found = problems(replacing: "\"width\": 320", with: "\"width\": \"320\"")
        #expect(found.first?.message == "expected an integer, found the string \"320\"")
    }

    @Test func aNumberInQuotesWhereANumberOrAWordMayGoIsToldToLoseTheQuotes() {
        func widths(_ list: String) -> [PipelineFileError.Problem] {
            problems(
                #"{"version": 1, "inputs": ["in/*.jpg"], "outputs": [{"name": "r", "widths": \#(list), "encode": {"format": "webp"}, "#
                    + #""path": "out/{stem}-{width}.webp"}]}"#)
        }
        let quoted = widths(#"["640", "original"]"#)
        #expect(quoted.map(\.path) == ["outputs[0].widths[0]"], "\(quoted)")
        #expect(
            quoted.first?.message
                == #"expected an integer or one of "original", found the string "640": write a number without quotes"#)
        // A word Swift would read as a number, but JSON would not, is not told to lose its quotes
        for word in ["inf", "nan", "0x10", "1.", "+5"] {
            #expect(widths(#"["\#(word)"]"#).first?.message.contains("without quotes") == false, "\(word)")
        }
        // A word that is not one of the choices is still named as one
        let word = widths(#"["orignal"]"#)
        #expect(word.first?.message.contains(#"did you mean "original"?"#) == true, "\(word)")
    }

    @Test func aQualityTargetForAFormatWithAFixedQualitySaysWhichFormatsTakeOne() {
        for format in ["png", "tiff"] {
            let found = problems(
                replacing: #""format": "webp", "quality": 80"#, with: #""format": "\#(format)", "quality": {"ssimulacra2": 80}"#)
            #expect(found.count == 1, "\(found)")
            #expect(found.first?.path == "outputs[0].encode.quality")
            #expect(
                found.first?.message
                    == "expected an integer, found an object: \(format)'s quality is a fixed number; a target score is for avif, heic, jpeg, jxl, webp"
            )
        }
        // A fixed quality is taken, and the reason is not given for a value of the right type
        let fixed = problems(replacing: #""format": "webp", "quality": 80"#, with: #""format": "png", "quality": 60"#)
        #expect(!fixed.contains { $0.path == "outputs[0].encode.quality" }, "\(fixed)")
        let outOfRange = problems(replacing: #""format": "webp", "quality": 80"#, with: #""format": "png", "quality": 600"#)
        #expect(outOfRange.first?.message.contains("out of range") == true && outOfRange.first?.message.contains("target") == false)
    }

    @Test func processorOptionRulesNameTheStep() {
        let found = problems(replacing: "\"width\": 320, \"height\": 320, ", with: "")
        #expect(found.count == 1)
        #expect(found.first?.path.hasPrefix("outputs[0].steps[0].resize") == true)
    }

    @Test func duplicateOutputNamesAndPathsAreErrors() {
        let second = #"{"name": "small", "encode": {"format": "webp"}, "path": "out/{stem}-small.webp"}"#
        let found = problems(replacing: "\"path\": \"out/{stem}-small.webp\"}", with: "\"path\": \"out/{stem}-small.webp\"}, " + second)
        #expect(found.contains { $0.path == "outputs[1].name" && $0.message.contains("already used") })
        #expect(found.contains { $0.path == "outputs[1].path" && $0.message.contains("same path template") })
    }

    @Test func pathExtensionMustMatchTheFormat() {
        let found = problems(replacing: "out/{stem}-small.webp", with: "out/{stem}-small.png")
        #expect(found.first?.path == "outputs[0].path")
        #expect(found.first?.message.contains("encoded as webp") == true)
    }

    @Test func badPathTemplateIsFound() {
        let found = problems(replacing: "out/{stem}-small.webp", with: "out/{stme}-small.webp")
        #expect(found.first?.path == "outputs[0].path")
        #expect(found.first?.message.contains("did you mean {stem}?") == true)
    }

    @Test func invalidJSONNamesLineAndColumn() {
        let found = problems(replacing: "\"version\": 1,", with: "\"version\": 1")
        #expect(found.first?.message.hasPrefix("invalid JSON") == true)
        #expect(found.first?.location?.line == 3)
    }

    @Test func unsupportedVersionIsRejected() {
        #expect(problems(replacing: "\"version\": 1", with: "\"version\": 2").first?.path == "version")
    }

    @Test func everyProblemIsReportedAtOnce() {
        let broken = Self.valid
            .replacingOccurrences(of: "\"quality\": 80", with: "\"quality\": 0")
            .replacingOccurrences(of: "\"fit\": \"cover\"", with: "\"fit\": \"fill-ish\"")
            .replacingOccurrences(of: "\"version\": 1,", with: "\"version\": 1, \"nmae\": \"x\",")
        #expect(problems(broken).count == 3)
    }

    @Test func anUnknownKeyDoesNotHideTheChecksThatComeAfterTheShapes() {
        // Given a file with an unknown key, a processor-option rule broken, a duplicate output name
        // and a path whose extension is not the format's
        let broken = """
            {
              "version": 1,
              "inputs": ["in/*.jpg"],
              "outputs": [
                {"name": "small", "steps": [{"resize": {"fit": "cover"}}],
                 "encode": {"format": "webp", "qualty": 80}, "path": "out/{stem}-small.webp"},
                {"name": "small", "steps": [{"resize": {"width": 64}}],
                 "encode": {"format": "jpeg"}, "path": "out/{stem}-large.png"}
              ]
            }
            """

        // When it is loaded
        let found = problems(broken)

        // Then all four are listed at once, in the order they appear in the file
        #expect(
            found.map(\.path) == [
                "outputs[0].steps[0].resize", "outputs[0].encode.qualty", "outputs[1].name", "outputs[1].path",
            ], "\(found)")
        #expect(found[0].message.contains("width or height"))
        #expect(found[1].message.contains("did you mean \"quality\"?"))
        #expect(found[2].message.contains("already used"))
        #expect(found[3].message.contains("ends in .png"))
    }

    @Test func aStepWithAMistypedOptionIsNotCheckedTwice() {
        // Given a step whose option has the wrong type (the shape check reports it)
        let found = problems(replacing: "\"width\": 320, \"height\": 320", with: "\"width\": \"wide\"")

        // Then it is reported once, and the step's own rules wait for it to be fixed
        #expect(found.count == 1, "\(found)")
        #expect(found.first?.path == "outputs[0].steps[0].resize.width")
    }

    @Test func errorTextNamesFileLineAndPath() {
        let error = PipelineFileError(
            file: "p.json",
            problems: [
                .init(path: "outputs[0].encode.qualty", location: SourceLocation(line: 6, column: 35), message: "unknown key")
            ])
        #expect(error.description == "p.json:6:35: error: outputs[0].encode.qualty: unknown key")
    }
}
