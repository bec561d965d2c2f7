import Foundation
import TestSupport
import Testing

@testable import PipelineKit

@Suite struct JSONParserTests {
    @Test func recordsTheLineAndColumnOfValuesAndKeys() throws {
        let text = """
            {
              "a": [1, 2.5, "x"],
              "b": {"c": true}
            }
            """
        let root = try JSONParser.parse(text)
        #expect(root.location == SourceLocation(line: 1, column: 1))
        guard case .object(let members) = root.value else { Issue.record("not an object"); return }
        #expect(members[0].keyLocation == SourceLocation(line: 2, column: 3))
        #expect(members[0].value.location == SourceLocation(line: 2, column: 8))
        #expect(root["b"]?["c"]?.location == SourceLocation(line: 3, column: 14))
        #expect(root["a"]?.jsonText == "[1,2.5,\"x\"]")
    }

    /// An integer by its value, as JSON Schema (and so an editor reading `pipeline schema`) counts
    /// one: `320.0` and `3e2` are integers, `320.5` is not.
    @Test func tellsIntegersFromFractionsByTheirValue() throws {
        let root = try JSONParser.parse("[320, 320.0, 3e2, 320.5, -0.0]")
        guard case .array(let items) = root.value else { Issue.record("not an array"); return }
        #expect(
            items.map(\.value) == [
                .number(320, isInteger: true), .number(320, isInteger: true), .number(300, isInteger: true),
                .number(320.5, isInteger: false), .number(0, isInteger: true),
            ])
    }

    @Test func decodesEscapesAndSurrogatePairs() throws {
        let root = try JSONParser.parse(#"["a\"b\\c\n", "\u00e9\ud83d\ude00"]"#)
        #expect(root.jsonText == #"["a\"b\\c\n","é😀"]"#)
    }

    @Test(arguments: [
        ("{\"a\": 1,}", 1, 8, "a trailing comma: JSON allows no ',' before '}'"),
        ("[1, 2,\n ]", 1, 6, "a trailing comma: JSON allows no ',' before ']'"),
        ("{\"a\": 1, 2}", 1, 10, "expected a key"),
        ("{\"version\": 1, // the format\n}", 1, 16, "a comment: JSON allows none"),
        ("[1, /* two */ 2]", 1, 5, "a comment: JSON allows none"),
        ("[\"a\\ud800b\"]", 1, 10, "an unpaired UTF-16 surrogate: an escape of D800 to DFFF needs"),
        ("{\"a\" 1}", 1, 6, "expected ':'"),
        ("[1 2]", 1, 4, "expected ','"),
        ("{\"a\": 1, \"a\": 2}", 1, 10, "duplicate key"),
        ("{\n  \"a\": tru\n}", 2, 8, "expected 'true'"),
        ("[01]", 1, 3, "leading zeros"),
        ("\"abc", 1, 5, "unterminated string"),
        ("", 1, 1, "unexpected end of file"),
        ("{} {}", 1, 4, "unexpected text after"),
    ])
    func reportsSyntaxErrorsWithTheirPosition(text: String, line: Int, column: Int, message: String) {
        #expect {
            try JSONParser.parse(text)
        } throws: { error in
            guard let error = error as? JSONParser.SyntaxError else { return false }
            return error.location == SourceLocation(line: line, column: column) && error.message.contains(message)
        }
    }

    @Test func refusesNestingDeepEnoughToExhaustTheStack() {
        let text = String(repeating: "[", count: 100_000)
        #expect(throws: JSONParser.SyntaxError.self) { try JSONParser.parse(text) }
    }
}

@Suite struct JSONParserScalingTests {
    @Test func positionsOnOneLongLineCostLinearWork() throws {
        // A pipeline file of 20,000 outputs on one line (about 2 MB), as a generator may write it
        let output =
            #"{"name": "o%d", "steps": [{"resize": {"width": 320}}], "encode": {"format": "webp", "quality": 80}, "path": "out/{stem}-%d.webp"}"#
        let outputs = (0..<20_000).map { String(format: output, $0, $0) }.joined(separator: ", ")
        let text = #"{"version": 1, "inputs": ["in/*.jpg"], "outputs": [\#(outputs)]}"#
        var parser = JSONParser(text)
        let root = try parser.parseDocument()

        // Every value still knows its column, and counting columns looked at each byte once
        guard case .array(let items)? = root["outputs"]?.value, let last = items.last else { Issue.record("no outputs"); return }
        let lastStart = try #require(text.range(of: #"{"name""#, options: .backwards)).lowerBound
        #expect(last.location.line == 1)
        #expect(last.location.column == text.distance(from: text.startIndex, to: lastStart) + 1)
        #expect(
            parser.bytesCountedForColumns <= text.utf8.count,
            "column counting went back over the line: \(parser.bytesCountedForColumns) bytes for a \(text.utf8.count)-byte file")
    }

    @Test func aLeadingByteOrderMarkIsIgnoredAndColumnsCountWithoutIt() throws {
        let root = try JSONParser.parse("\u{FEFF}{\"x\": 1}")
        #expect(root["x"]?.location == SourceLocation(line: 1, column: 7))
        // Anywhere else it is no JSON
        #expect(throws: JSONParser.SyntaxError.self) { try JSONParser.parse("{\"x\": \u{FEFF}1}") }
    }

    @Test func columnsCountCharactersNotBytes() throws {
        let root = try JSONParser.parse(#"{"name": "ünïcødé", "x": 1}"#)
        #expect(root["x"]?.location.column == 26)
    }
}
