import Foundation
import TestSupport
import Testing

@testable import PipelineKit

/// A list file's lines are found from the list's folder, and named, as every input is, relative
/// to the pipeline file's folder: an output's `inputs` and the manifest's `source` see them so.
@Suite struct ListFileTests {
    @Test func listedFilesAreNamedFromThePipelineFilesFolder() throws {
        // Given photos/a.jpg named directly, photos/b.jpg by a list beside it, photos/c.jpg by a
        // list in another folder, and a file outside the pipeline file's folder
        let directory = try TemporaryDirectory()
        let outside = try TemporaryDirectory()
        for name in ["a", "b", "c"] { try directory.write(Data("x".utf8), to: "photos/\(name).jpg") }
        try outside.write(Data("x".utf8), to: "d.jpg")
        try directory.write(Data("b.jpg\n".utf8), to: "photos/list.txt")
        try directory.write(Data("../photos/c.jpg\n\(outside.path)/d.jpg\n".utf8), to: "lists/more.txt")
        // When the inputs are found
        let found = InputEnumerator(baseDirectory: directory.url).enumerate(
            [.pattern("photos/a.jpg"), .list("photos/list.txt"), .list("lists/more.txt")], into: [InputFile]())
        // Then each is named relative to the pipeline file's folder, or in full outside it
        #expect(found.problems.isEmpty, "\(found.problems)")
        #expect(found.sink.map(\.displayName) == ["photos/a.jpg", "photos/b.jpg", "photos/c.jpg", outside.path + "/d.jpg"])
        let subset = try #require(InputSubset(patterns: ["photos/*.jpg"]))
        #expect(
            found.sink.map { subset.contains($0, baseDirectory: directory.url, caseInsensitive: false) } == [true, true, true, false])
    }

    @Test func aLineLongerThanAnyInputIsRefusedNamingIt() throws {
        // Given a list whose second line is longer than any path or address
        let directory = try TemporaryDirectory()
        try directory.write(Data("x".utf8), to: "a.jpg")
        let long = String(repeating: "b", count: InputEnumerator.longestListedInput + 1)
        try directory.write(Data("a.jpg\n\(long)\n".utf8), to: "list.txt")
        // When the inputs are found
        let found = InputEnumerator(baseDirectory: directory.url).enumerate([.list("list.txt")], into: [InputFile]())
        // Then the line is refused, by its number and length, and the others are read
        #expect(found.sink.map(\.displayName) == ["a.jpg"])
        #expect(
            found.problems.map(\.message) == [
                "list.txt:2: the line is 65537 bytes long, more than the 65536 an input's path or address may have here: "
                    + "is the file a list of inputs?"
            ], "\(found.problems.map(\.message))")
    }
}
