import Foundation
import StandardProcessors
import TestSupport
import Testing

@testable import PipelineKit

/// Mutation fuzzing of the pipeline-file parser, validator and loader, and of the option
/// decoders: seeded, with a fixed number of cases, so a failure replays exactly. Any input must
/// load or fail with a `PipelineFileError` that lists its problems; nothing may crash.
@Suite struct PipelineFileFuzzTests {
    static let corpusFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/fuzz-pipelines")

    /// The committed seed files, sorted so the run is the same everywhere.
    static func seeds() throws -> [[UInt8]] {
        let names = try FileManager.default.contentsOfDirectory(atPath: corpusFolder.path).filter { $0.hasSuffix(".json") }.sorted()
        return try names.map { [UInt8](try Data(contentsOf: corpusFolder.appendingPathComponent($0))) }
    }

    /// Fragments that reach deep into the format: keys, units, placeholders, escapes, extremes.
    static let dictionary: [String] = [
        "{", "}", "[", "]", "\"", "\\", ",", ":", "null", "true", "false", "-0", "0", "1e400", "-1e-400",
        "99999999999999999999", "1.5", "4294967296", "2147483648", "-2147483649", "\"\\ud800\"", "\"\\u0000\"",
        "\"\\udbff\\udfff\"", "\"30s\"", "\"0s\"", "\"1e3ms\"", "\"99999999999999999999999999999h\"", "\".5s\"",
        "\"50MB\"", "\"1.5GiB\"", "\"9999999999TB\"", "\"#fff\"", "\"#ff00ff80\"", "\"transparent\"", "\"#g00\"",
        "\"{stem}\"", "\"{dir}/{name}\"", "\"../..\"", "\"/\"", "\"out/{width}x{height}.{format}\"", "\"{\"", "\"}\"",
        "\"maxPixels\"", "\"timeout\"", "\"failOn\"", "\"inFlight\"", "\"steps\"", "\"encode\"", "\"format\"",
        "{\"resize\": {}}", "{\"crop\": {\"left\": 0}}", "{\"blur\": {\"sigma\": 0.1}}", "{\"resize\": {\"width\": 1, \"height\": 100000}}",
        "\"avif\"", "\"webp\"", "\"png\"", "\"jpeg\"", "\"4:4:4\"", "\"attention\"", "\"outside\"", "\"\u{0301}\"", "\"日本\"",
        String(repeating: "[", count: 199), String(repeating: "{\"a\":", count: 120), "\n", "\t", "\u{FEFF}",
    ]

    /// Cases per shard: `PIPELINE_FUZZ_ITERATIONS` when set, else `value`.
    static func iterations(default value: Int) -> Int {
        ProcessInfo.processInfo.environment["PIPELINE_FUZZ_ITERATIONS"].flatMap { Int($0) } ?? value
    }

    /// One mutation of `input`, chosen by `generator`.
    static func mutate(_ input: [UInt8], seeds: [[UInt8]], using generator: inout SeededGenerator) -> [UInt8] {
        var bytes = input
        let position = bytes.isEmpty ? 0 : Int.random(in: 0..<bytes.count, using: &generator)
        switch Int.random(in: 0..<8, using: &generator) {
        case 0 where !bytes.isEmpty:
            bytes[position] ^= UInt8(1) << UInt8.random(in: 0...7, using: &generator)
        case 1 where !bytes.isEmpty:
            let interesting: [UInt8] = Array("{}[]\",:\\0-e.1 \n".utf8) + [0x00, 0xFF, 0xC3, 0xE2, 0x80, 0x7F]
            bytes[position] = interesting.randomElement(using: &generator) ?? 0
        case 2 where !bytes.isEmpty:
            let end = min(bytes.count, position + Int.random(in: 1...64, using: &generator))
            bytes.removeSubrange(position..<end)
        case 3 where !bytes.isEmpty:
            let end = min(bytes.count, position + Int.random(in: 1...64, using: &generator))
            bytes.insert(contentsOf: bytes[position..<end], at: position)
        case 4:
            let other = seeds.randomElement(using: &generator) ?? []
            let cut = other.isEmpty ? 0 : Int.random(in: 0..<other.count, using: &generator)
            bytes = Array(bytes[..<position]) + Array(other[cut...])
        case 5:
            let fragment = dictionary.randomElement(using: &generator) ?? ""
            bytes.insert(contentsOf: Array(fragment.utf8), at: position)
        case 6:
            // Replace a whole token (a number, a string or a word) with a dictionary fragment.
            let fragment = Array((dictionary.randomElement(using: &generator) ?? "").utf8)
            let delimiters = Set(Array(",:{}[] \n".utf8))
            var start = position, end = position
            while start > 0, !delimiters.contains(bytes[start - 1]) { start -= 1 }
            while end < bytes.count, !delimiters.contains(bytes[end]) { end += 1 }
            bytes.replaceSubrange(start..<end, with: fragment)
        default:
            bytes = Array(bytes.prefix(position))
        }
        return bytes
    }

    /// The pipeline file `text` with its `inputs` replaced by `in/*.jpg`, or nil when it is not
    /// a JSON object.
    static func replacingInputs(of text: String) -> String? {
        guard case .object(let members)? = try? JSONParser.parse(text).value else { return nil }
        let inputs = JSONNode(plain: ["in/*.jpg"] as [any Sendable])
        return JSONNode(
            .object(
                members.map {
                    $0.key == "inputs" ? JSONNode.Member(key: $0.key, keyLocation: $0.keyLocation, value: inputs) : $0
                })
        ).jsonText
    }

    /// Loads `bytes` every way a pipeline file can arrive, and uses what loads.
    static func exercise(_ bytes: [UInt8], in directory: TemporaryDirectory) throws {
        let text = String(decoding: bytes, as: UTF8.self)
        do {
            let definition = try PipelineDefinition(json: text, baseDirectory: directory.url, processors: .standard)
            // A loaded file's outputs are planned against a real input (its own inputs could
            // name any folder on the machine): the same file with its inputs replaced. Its
            // processors are asked about extreme sizes.
            if let replaced = replacingInputs(of: text),
                let planned = try? PipelineDefinition(json: replaced, baseDirectory: directory.url, processors: .standard)
            {
                _ = try? RunPlan(planned, fileName: "fuzz.json")
            }
            let sizes = [
                ImageSize(width: 1, height: 1), ImageSize(width: 3, height: 100_000),
                ImageSize(width: 100_000, height: 3), ImageSize(width: 16383, height: 16383),
            ]
            for output in definition.outputs {
                for size in sizes {
                    var current = size
                    for step in output.steps {
                        _ = step.allowedInputShrink(for: current)
                        current = step.outputSize(for: current)
                    }
                }
                _ = ImageDecoder(settings: definition.decompress, outputs: [output]).allowedShrink(for: sizes[3])
            }
        } catch {
            #expect(!error.problems.isEmpty, "a PipelineFileError must list a problem")
            #expect(!error.description.isEmpty)
        }
        // The same bytes as a file on disk (invalid UTF-8 stays invalid there).
        let file = directory.url.appendingPathComponent("fuzz.json")
        try Data(bytes).write(to: file)
        do {
            _ = try PipelineDefinition(contentsOf: file, processors: .standard)
        } catch {
            #expect(!error.problems.isEmpty)
        }
    }

    @Test func theSeedCorpusLoadsOrFailsClearly() throws {
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.solid(width: 8, height: 8)), to: "in/a.jpg")
        let seeds = try Self.seeds()
        #expect(seeds.count >= 6)
        for seed in seeds { try Self.exercise(seed, in: directory) }
        // The corpus reaches both ends: a file that loads and files full of problems.
        #expect(
            (try? PipelineDefinition(json: String(decoding: seeds[0], as: UTF8.self), baseDirectory: directory.url, processors: .standard))
                != nil
                || seeds.contains {
                    (try? PipelineDefinition(json: String(decoding: $0, as: UTF8.self), baseDirectory: directory.url, processors: .standard))
                        != nil
                })
    }

    @Test(arguments: 0..<4)
    func mutatedPipelineFilesLoadOrFailWithAPipelineFileError(shard: Int) throws {
        // Given the seed corpus and a fixed seed per shard (shards run in parallel)
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.solid(width: 8, height: 8)), to: "in/a.jpg")
        let seeds = try Self.seeds()
        var generator = SeededGenerator(seed: 0x5EED_0000 + UInt64(shard))
        // When 2500 inputs (or PIPELINE_FUZZ_ITERATIONS, for a longer hunt by hand), each one to
        // four mutations away from a seed, are loaded
        for _ in 0..<Self.iterations(default: 2500) {
            var bytes = seeds.randomElement(using: &generator) ?? []
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                bytes = Self.mutate(bytes, seeds: seeds, using: &generator)
            }
            // Then each loads or fails with a PipelineFileError (typed throws), and nothing crashes
            try Self.exercise(bytes, in: directory)
        }
    }

    @Test func unitDecodersAcceptOrRefuseAnyText() {
        var generator = SeededGenerator(seed: 0xDEC0DE)
        let alphabet =
            Array("0123456789.-+eE sSmMhKkiBGTb#abcdefABCDEF{}/\\\u{0}\u{301}日%")
            + ["ms", "MiB", "GB", "white", "{stem}", "{dir}", ".."]
            .flatMap { Array($0) }
        for _ in 0..<20000 {
            let length = Int.random(in: 0...12, using: &generator)
            let text = String((0..<length).map { _ in alphabet.randomElement(using: &generator) ?? "0" })
            if let seconds = Units.seconds(in: text) { #expect(seconds >= 0) }
            if let bytes = Units.bytes(in: text) { #expect(bytes >= 0) }
            if let colour = Units.colour(in: text) { #expect(colour.count == 4 && colour.allSatisfy { (0...255).contains($0) }) }
            if let template = try? PathTemplate(text) {
                _ = template.authoredFolder
                _ = try? template.resolve([
                    .stem: text, .dir: text, .name: text, .ext: text, .output: "o", .format: "jpg", .width: "1", .height: "1",
                ])
            }
            _ = NearestName.suggestion(for: text, among: ["quality", "maxPixels", "timeout"])
        }
    }
}
