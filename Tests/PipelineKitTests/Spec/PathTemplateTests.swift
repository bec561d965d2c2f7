import TestSupport
import Testing

@testable import PipelineKit

@Suite struct PathTemplateTests {
    @Test func fillsPlaceholdersAndKeepsTheAuthoredFolder() throws {
        let template = try PathTemplate("out/thumbs/{dir}/{stem}-{output}.{format}")
        #expect(template.authoredFolder == "out/thumbs")
        let path = try template.resolve([.dir: "2024/may", .stem: "cat", .output: "small", .format: "webp"])
        #expect(path == "out/thumbs/2024/may/cat-small.webp")
    }

    @Test func aTemplateWithoutPlaceholdersOwnsItsWholeFolder() throws {
        #expect(try PathTemplate("/srv/www/img/logo.png").authoredFolder == "/srv/www/img")
        #expect(try PathTemplate("{stem}.jpg").authoredFolder == "")
    }

    @Test func unknownPlaceholderSuggestsTheNearestOne() {
        #expect {
            try PathTemplate("out/{stme}.jpg")
        } throws: { error in
            (error as? PathTemplate.Failure)?.message.contains("did you mean {stem}?") == true
        }
    }

    @Test(arguments: ["out/{stem.jpg", "out/stem}.jpg", "", "out/"])
    func malformedTemplatesAreRejected(text: String) {
        #expect(throws: PathTemplate.Failure.self) { try PathTemplate(text) }
    }

    @Test(arguments: [
        (PathTemplate.Placeholder.stem, ".."),
        (.stem, "a/b"),
        (.dir, "../x"),
        (.dir, "a/../../x"),
        (.dir, "/etc"),
        (.name, "a\0b"),
    ])
    func filledInValuesCannotLeaveTheFolder(placeholder: PathTemplate.Placeholder, value: String) throws {
        let template = try PathTemplate("out/{dir}/{stem}/{name}.jpg")
        var values: [PathTemplate.Placeholder: String] = [.dir: "d", .stem: "s", .name: "n"]
        values[placeholder] = value
        #expect(throws: PathTemplate.Failure.self) { try template.resolve(values) }
    }
}

extension PathTemplateTests {
    @Test func aSlashHiddenInACombiningSequenceIsStillASlash() throws {
        let template = try PathTemplate("out/{stem}.jpg")
        #expect(throws: PathTemplate.Failure.self) { try template.resolve([.stem: "a/\u{301}b"]) }
        #expect(throws: PathTemplate.Failure.self) { try template.resolve([.stem: "..\u{301}/x"]) }
    }
}
