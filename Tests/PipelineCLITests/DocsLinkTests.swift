import Foundation
import TestSupport
import Testing

/// Every link between the README and the docs leads somewhere: the file it names exists, and
/// its `#anchor` is a heading of that file, as GitHub names headings.
@Suite struct DocsLinkTests {
    static let root = CommandRunner.repositoryRoot

    /// The Markdown files a user reads: the README, docs/ and the benchmark results.
    static func documents() throws -> [URL] {
        let docs = root.appendingPathComponent("docs")
        let names = try FileManager.default.contentsOfDirectory(atPath: docs.path).filter { $0.hasSuffix(".md") }
        return [root.appendingPathComponent("README.md"), root.appendingPathComponent("Benchmarks/RESULTS.md")]
            + names.sorted().map { docs.appendingPathComponent($0) }
    }

    /// The anchors GitHub gives the headings of `text`: lower case, without punctuation but `-`
    /// and `_`, spaces as `-`, and `-1`, `-2`, … after a repeat.
    static func anchors(_ text: String) -> Set<String> {
        var seen: [String: Int] = [:]
        var anchors = Set<String>()
        var inCode = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") { inCode.toggle() }
            guard !inCode, line.hasPrefix("#") else { continue }
            let title = line.drop { $0 == "#" }.trimmingCharacters(in: .whitespaces)
            let slug = String(
                title.lowercased().compactMap { character -> Character? in
                    if character == " " { return "-" }
                    return character.isLetter || character.isNumber || character == "-" || character == "_" ? character : nil
                })
            let count = seen[slug, default: 0]
            seen[slug] = count + 1
            anchors.insert(count == 0 ? slug : "\(slug)-\(count)")
        }
        return anchors
    }

    /// The targets of the inline links of `text` (`[words](target)`), outside code.
    static func linkTargets(_ text: String) -> [String] {
        var targets: [String] = []
        var inCode = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") { inCode.toggle() }
            guard !inCode else { continue }
            // Inline code may hold a "](", which is no link.
            let prose = line.split(separator: "`", omittingEmptySubsequences: false).enumerated().filter { $0.offset % 2 == 0 }
                .map(\.element).joined(separator: " ")
            var rest = prose[...]
            while let start = rest.range(of: "](") {
                let after = rest[start.upperBound...]
                guard let end = after.firstIndex(of: ")") else { break }
                targets.append(String(after[..<end]))
                rest = after[end...]
            }
        }
        return targets
    }

    @Test func everyLinkBetweenTheDocsLeadsToAFileAndAHeadingOfIt() throws {
        var checked = 0
        for document in try Self.documents() {
            let text = try String(contentsOf: document, encoding: .utf8)
            for target in Self.linkTargets(text) where !target.contains("://") && !target.hasPrefix("mailto:") {
                let parts = target.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)
                let path = String(parts[0])
                let file = path.isEmpty ? document : document.deletingLastPathComponent().appendingPathComponent(path)
                let name = "\(document.lastPathComponent): (\(target))"
                #expect(FileManager.default.fileExists(atPath: file.path), "\(name): no such file")
                checked += 1
                guard parts.count == 2, file.pathExtension == "md", let linked = try? String(contentsOf: file, encoding: .utf8) else {
                    continue
                }
                #expect(Self.anchors(linked).contains(String(parts[1])), "\(name): no such heading")
            }
        }
        #expect(checked > 50, "\(checked)")
    }
}
