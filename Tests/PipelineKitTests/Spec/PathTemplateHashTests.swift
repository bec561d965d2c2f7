import TestSupport
import Testing

@testable import PipelineKit

/// `{hash}` and `{hash:N}`: the start of the SHA-256 of the written file, in the file name only.
@Suite struct PathTemplateHashTests {
    static let digest = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

    @Test func hashFillsTenHexDigitsOrAsManyAsAsked() throws {
        let template = try PathTemplate("out/{stem}-{hash}.{format}")
        #expect(template.namesHash && template.placeholders.contains(.hash))
        #expect(try template.resolve([.stem: "cat", .format: "jpg", .hash: Self.digest]) == "out/cat-0123456789.jpg")
        let six = try PathTemplate("out/{stem}.{hash:6}.jpg")
        #expect(try six.resolve([.stem: "cat", .hash: Self.digest]) == "out/cat.012345.jpg")
        let all = try PathTemplate("out/{hash:64}.jpg")
        #expect(try all.resolve([.hash: Self.digest]) == "out/\(Self.digest).jpg")
    }

    @Test func aPathPlannedBeforeTheBytesKeepsThePlaceholder() throws {
        let template = try PathTemplate("out/{stem}-{hash:8}.jpg")
        #expect(try template.resolve([.stem: "cat", .hash: PathTemplate.unknownHash]) == "out/cat-{hash:8}.jpg")
    }

    @Test(arguments: ["out/{hash:5}.jpg", "out/{hash:65}.jpg", "out/{hash:}.jpg", "out/{hash:x}.jpg", "out/{hash:+8}.jpg"])
    func anOutOfRangeLengthIsRefused(text: String) {
        #expect {
            try PathTemplate(text)
        } throws: { error in
            (error as? PathTemplate.Failure)?.message.contains("from 6 to 64") == true
        }
    }

    @Test(arguments: ["out/{hash}/{stem}.jpg", "out/{stem}-{hash}/a.jpg", "out/{hash}{dir}.jpg"])
    func aHashInAFolderNameIsRefused(text: String) {
        #expect {
            try PathTemplate(text)
        } throws: { error in
            (error as? PathTemplate.Failure)?.message.contains("only be in the file name") == true
        }
    }

    @Test func aHashThatIsNotASHA256IsRefused() throws {
        let template = try PathTemplate("out/{hash}.jpg")
        #expect(throws: PathTemplate.Failure.self) { try template.resolve([.hash: "../../etc/passwd"]) }
        #expect(throws: PathTemplate.Failure.self) { try template.resolve([.hash: String(Self.digest.uppercased())]) }
    }

    @Test func anUnknownHashMatchesOnlyHexDigits() {
        let unknown = PathPattern("/out/cat-" + String(repeating: PathPattern.hexDigit, count: 10) + ".jpg")
        #expect(unknown.hasUnknowns)
        #expect(unknown.canMatch(PathPattern("/out/cat-0123456789.jpg")))
        #expect(!unknown.canMatch(PathPattern("/out/cat-012345678g.jpg")))
        #expect(!unknown.canMatch(PathPattern("/out/cat-012345678.jpg")))
    }
}
