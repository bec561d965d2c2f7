import Foundation
import PipelineKit
import StandardProcessors
import TestSupport
import Testing

/// The generated reference in docs/ is what the commands print, names every key and step, and the
/// version is one semantic version that the changelog names.
@Suite struct ReferenceDocsTests {
    static let docs = CommandRunner.repositoryRoot.appendingPathComponent("docs")

    /// The committed file `name` in docs/ equals what `arguments` prints.
    func expectCommitted(_ name: String, equalsOutputOf arguments: [String]) throws {
        let result = try CommandRunner.run(arguments)
        #expect(result.status == 0, "\(result.standardError)")
        let committed = try String(contentsOf: Self.docs.appendingPathComponent(name), encoding: .utf8)
        let firstDifference = zip(
            committed.split(separator: "\n", omittingEmptySubsequences: false),
            result.standardOutput.split(separator: "\n", omittingEmptySubsequences: false)
        )
        .enumerated().first { $0.element.0 != $0.element.1 }
        #expect(
            committed == result.standardOutput,
            """
            docs/\(name) differs from what `pipeline \(arguments.joined(separator: " "))` prints\
            \(firstDifference.map { " (first at line \($0.offset + 1))" } ?? " (in length)"): \
            regenerate it with `swift run pipeline \(arguments.joined(separator: " ")) > docs/\(name)` and commit it
            """)
    }

    @Test func pipelineFileReferenceIsWhatSchemaMarkdownPrints() throws {
        try expectCommitted("pipeline-file.md", equalsOutputOf: ["schema", "--markdown"])
    }

    @Test func processorsReferenceIsWhatPluginsMarkdownPrints() throws {
        try expectCommitted("processors.md", equalsOutputOf: ["plugins", "--markdown"])
    }

    /// Every property name in a JSON Schema, at any depth.
    func propertyNames(_ value: Any) -> Set<String> {
        var names = Set<String>()
        if let object = value as? [String: Any] {
            if let properties = object["properties"] as? [String: Any] { names.formUnion(properties.keys) }
            for member in object.values { names.formUnion(propertyNames(member)) }
        } else if let array = value as? [Any] {
            for item in array { names.formUnion(propertyNames(item)) }
        }
        return names
    }

    @Test func pipelineFileReferenceNamesEveryKeyOfTheSchema() throws {
        let schema = try CommandRunner.run(["schema"])
        let names = propertyNames(try JSONSerialization.jsonObject(with: Data(schema.standardOutput.utf8)))
        // Sanity: the walk found keys at the top, in stages, in outputs, encoders and steps.
        for name in ["inputs", "maxBytes", "placeholders", "chromaSubsampling", "resize", "sigma"] { #expect(names.contains(name)) }
        let reference = try String(contentsOf: Self.docs.appendingPathComponent("pipeline-file.md"), encoding: .utf8)
        let missing = names.filter { !reference.contains("`\($0)`") }.sorted()
        #expect(missing.isEmpty, "docs/pipeline-file.md does not name \(missing)")
    }

    @Test func processorsReferenceHasASectionForEveryStepWithEachOption() throws {
        let reference = try String(contentsOf: Self.docs.appendingPathComponent("processors.md"), encoding: .utf8)
        let sections = reference.components(separatedBy: "\n## ").dropFirst()
        for processor in ProcessorRegistry.standard.processors {
            let section = sections.first { $0.hasPrefix(processor.name + "\n") }
            #expect(section != nil, "docs/processors.md has no section for \(processor.name)")
            for option in processor.options {
                #expect(section?.contains("| `\(option.name)` |") == true, "docs/processors.md: \(processor.name) lacks \(option.name)")
            }
        }
    }

    /// The default of every key the schema gives one, by its path, as JSON text: `fetch.maxBytes` → `"100MB"`.
    func defaults(in schema: [String: Any], at path: String = "") -> [(String, String)] {
        guard let properties = schema["properties"] as? [String: Any] else { return [] }
        var found: [(String, String)] = []
        for (name, value) in properties {
            guard let property = value as? [String: Any] else { continue }
            let keyPath = path.isEmpty ? name : "\(path).\(name)"
            if let value = property["default"] {
                let text =
                    if let string = value as? String { "\"\(string)\"" } else if property["type"] as? String == "boolean" {
                        "\(value as? Bool ?? false)"
                    } else { "\(value)" }
                found.append((keyPath, text))
            }
            found += defaults(in: property, at: keyPath)
            if let items = property["items"] as? [String: Any] { found += defaults(in: items, at: keyPath + "[]") }
        }
        return found
    }

    @Test func pluginsListsEveryKeyOfThePipelineFileWithItsDefault() throws {
        let schema = try #require(
            try JSONSerialization.jsonObject(with: Data(try CommandRunner.run(["schema"]).standardOutput.utf8)) as? [String: Any])
        let keys = defaults(in: schema)
        #expect(keys.contains { $0.0 == "fetch.maxBytes" } && keys.contains { $0.0 == "outputs[].placeholderOptions.lqipWidth" })
        let listing = try CommandRunner.run(["plugins"]).standardOutput
        let lines = listing.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        for (path, text) in keys {
            #expect(
                lines.contains { $0.hasPrefix(path + " (") && $0.contains("default \(text)") }, "plugins lacks \(path) with default \(text)"
            )
        }
        // Keys with no default are listed too: a required one, and one whose default is a rule.
        #expect(lines.contains { $0.hasPrefix("outputs[].path (") && $0.contains("required") })
        #expect(lines.contains { $0.hasPrefix("inFlight (") && $0.contains("default: the sum of") })
    }

    @Test func markdownCannotBeAskedForWithAnotherListing() throws {
        #expect(try CommandRunner.run(["schema", "--markdown", "--manifest"]).status == 2)
        #expect(try CommandRunner.run(["plugins", "--markdown", "--vips"]).status == 2)
    }

    /// The README's headline figures are the current ones of `Benchmarks/RESULTS.md`: the standard
    /// job's ratios on the corpus and the large PNG's row. A new measurement there fails this until
    /// the README says the same.
    @Test func theReadmesFiguresAreThoseOfTheResultsTables() throws {
        let root = CommandRunner.repositoryRoot
        // Compared as words, so that the README's lines may wrap anywhere.
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
            .split(whereSeparator: \.isWhitespace).joined(separator: " ")
        let results = try String(contentsOf: root.appendingPathComponent("Benchmarks/RESULTS.md"), encoding: .utf8)
        let current = results.components(separatedBy: "\n## History").first ?? results

        // The first ratio row of the standard job's table is the corpus'.
        let standard = try #require(
            current.firstMatch(of: /\| \*\*pipeline \/ reference\*\* \| \*\*([0-9.]+×)\*\* \| [0-9.]+× \| \*\*([0-9.]+×)\*\*/),
            "Benchmarks/RESULTS.md has no standard-job ratio row")
        let corpusClaim = "**\(standard.1) the wall time at \(standard.2) the peak memory** on 42 photos"
        let saysCorpusClaim = readme.contains(corpusClaim)
        #expect(
            saysCorpusClaim,
            "README.md should say \"\(corpusClaim)\", as the standard job's table in Benchmarks/RESULTS.md does")

        let png = try #require(
            current.firstMatch(of: /\| 40000×25000 PNG [^|]*\| [0-9.]+ \| [0-9.]+ \(([0-9.]+×)\) \| [0-9.]+ \| [0-9.]+ \(([0-9.]+×)\)/),
            "Benchmarks/RESULTS.md has no row for the 40000×25000 PNG")
        let pngClaim = "\(png.1) the time at \(png.2) the memory on a 40000×25000 PNG"
        let saysPNGClaim = readme.contains(pngClaim)
        #expect(
            saysPNGClaim,
            "README.md should say \"\(pngClaim)\", as the big images' table in Benchmarks/RESULTS.md does")
    }

    /// The README's table of steps names every step `pipeline plugins` lists, and no other.
    @Test func theReadmesStepsAreThoseThePluginsListing() throws {
        let listing = try CommandRunner.run(["plugins"])
        #expect(listing.status == 0, "\(listing.standardError)")
        let listed = Set(
            listing.standardOutput.split(separator: "\n").compactMap { $0.firstMatch(of: #/^([a-z]+): /#)?.1 }.map(String.init))
        let readme = try String(contentsOf: CommandRunner.repositoryRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let section = try #require(readme.components(separatedBy: "\n## Steps\n").dropFirst().first?.components(separatedBy: "\n## ").first)
        // A row's first cell names its steps, in backticks: | `greyscale`, `grayscale` | …
        let rows = section.split(separator: "\n").filter { $0.hasPrefix("| `") }
        let named = Set(
            rows.flatMap { row in row.split(separator: "|").first.map { $0.matches(of: /`([a-z]+)`/).map { String($0.1) } } ?? [] })
        #expect(listed.count > 10, "\(listing.standardOutput)")
        #expect(
            named == listed, "README.md's steps lack \(listed.subtracting(named).sorted()) and name \(named.subtracting(listed).sorted())")
    }

    /// Each example in the README's table of steps is a step `pipeline validate` accepts.
    @Test func theReadmesStepExamplesAreValidSteps() throws {
        let readme = try String(contentsOf: CommandRunner.repositoryRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let section = try #require(readme.components(separatedBy: "\n## Steps\n").dropFirst().first?.components(separatedBy: "\n## ").first)
        // A row's last cell is its example: | `resize` | … | `{"resize": {…}}` |
        let examples = section.split(separator: "\n").filter { $0.hasPrefix("| `") }.compactMap { row in
            row.split(separator: "|").last?.trimmingCharacters(in: .whitespaces).firstMatch(of: /^`(\{.*\})`$/).map { String($0.1) }
        }
        #expect(examples.count > 10, "\(section)")
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 64, height: 48)), to: "in/a.jpg")
        try directory.write(try Fixtures.png(try Fixtures.gradient(width: 16, height: 8, bands: 4)), to: "logo.png")
        for example in examples {
            let output = #"{"name": "o", "steps": [\#(example)], "encode": {"format": "png"}, "path": "out/{stem}.png"}"#
            try directory.write(Data(PipelineHarness.json(inputs: ["in/*.jpg"], outputs: [output]).utf8), to: "p.json")
            let result = try CommandRunner.run(["validate", "p.json"], in: directory.url)
            #expect(result.status == 0, "README.md's example \(example): \(result.standardError)")
        }
    }

    @Test func theVersionIsSemanticTheChangelogsNewestAndWhatVersionPrints() throws {
        let version = PipelineKitInfo.version
        #expect(version.wholeMatch(of: /(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)/) != nil, "\(version) is not MAJOR.MINOR.PATCH")
        let changelog = try String(contentsOf: CommandRunner.repositoryRoot.appendingPathComponent("CHANGELOG.md"), encoding: .utf8)
        let headings = changelog.split(separator: "\n").filter { $0.hasPrefix("## ") }.map { $0.dropFirst(3) }
        #expect(headings.first == "Unreleased", "CHANGELOG.md should start with an Unreleased section")
        #expect(headings.dropFirst().first.map(String.init) == version, "CHANGELOG.md's newest release should be \(version)")
        let printed = try CommandRunner.run(["--version"])
        #expect(printed.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines) == version)
    }
}
