#if Server
import Foundation
import StandardProcessors
import TestSupport
import Testing
import Vips

@testable import PipelineKit
@testable import PipelineServer

/// A request makes the file it names (output × width × format) and no other; `serve.makeAll`
/// makes every file of the input; batch runs and the manifest agree with what was made.
@Suite(.serialized) struct ServeAskedVariantTests {
    /// Two outputs, each of two widths in two formats: eight files of each input.
    static func json(serve: String = "") -> String {
        let thumb =
            #"{"name": "thumb", "widths": [16, 24], "formats": [{"format": "avif"}, {"format": "webp"}], "path": "out/thumb/{stem}-{width}.{format}"}"#
        let card =
            #"{"name": "card", "widths": [8, 12], "formats": [{"format": "avif"}, {"format": "webp"}], "path": "out/card/{stem}-{width}.{format}"}"#
        let manifest = #""manifest": {"path": "site/images.json"}"#
        return PipelineHarness.json(
            inputs: ["in/*.jpg"], outputs: [thumb, card], extra: serve.isEmpty ? manifest : manifest + ", " + serve)
    }

    /// The files below `out/`, by their path there, sorted.
    static func made(in directory: TemporaryDirectory) -> [String] {
        let out = directory.path + "/out"
        let found = FileManager.default.enumerator(atPath: out)?.compactMap { $0 as? String } ?? []
        return found.filter { path in
            var isFolder: ObjCBool = false
            return FileManager.default.fileExists(atPath: out + "/" + path, isDirectory: &isFolder) && !isFolder.boolValue
        }
        .sorted()
    }

    /// The identity and modification time of the file at `path`.
    static func identity(_ path: String) throws -> String {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        let inode = try #require(attributes[.systemFileNumber] as? NSNumber)
        let modified = try #require(attributes[.modificationDate] as? Date)
        return "\(inode) \(modified.timeIntervalSince1970)"
    }

    @Test func requestsAtOnceForDifferentFilesOfOneInputEachMakeTheirsAndTheManifestHasAll() async throws {
        let directory = try ServeTests.folder()
        try FileManager.default.removeItem(atPath: directory.path + "/in/sub")
        let asked = [
            ("/thumb/a.jpg?width=16", "image/webp"), ("/thumb/a.jpg?width=24", "image/avif"), ("/card/a.jpg?width=8", "image/webp"),
        ]
        try await withServer(Self.json(), in: directory) { server in
            // When three files of one input are asked for at once
            let answers = try await withThrowingTaskGroup(of: (Int, UInt).self) { group in
                for (target, accept) in asked {
                    group.addTask {
                        let answer = try await server.request(target, headers: ["Accept": accept])
                        return (answer.status, UInt(try VipsImage.open(data: answer.body).width))
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            // Then each is answered with its own file, and those three alone are made
            #expect(answers.map(\.0) == [200, 200, 200])
            #expect(answers.map(\.1).sorted() == [8, 16, 24])
            #expect(Self.made(in: directory) == ["card/a-8.webp", "thumb/a-16.webp", "thumb/a-24.avif"])
        }
        // And the input's manifest entry names all three, whichever run ended last
        let manifest = try ImageManifest.read(from: directory.url.appendingPathComponent("site/images.json"))
        let entry = try #require(manifest.inputs.first { $0.source == "in/a.jpg" })
        let files = entry.outputs.flatMap { name, output in output.formats.flatMap(\.files).map { "\(name) \($0.width) \($0.format)" } }
        #expect(files.sorted() == ["card 8 webp", "thumb 16 webp", "thumb 24 avif"])
    }

    @Test func aRequestMakesOnlyTheFileItNames() async throws {
        let directory = try ServeTests.folder()
        try FileManager.default.removeItem(atPath: directory.path + "/in/sub")
        let json = Self.json()
        try await withServer(json, in: directory) { server in
            // When one file of an input with eight is asked for
            let first = try await server.request("/thumb/a.jpg?width=16", headers: ["Accept": "image/webp"])
            // Then that file alone is made, and answered
            #expect(first.status == 200, "\(String(decoding: first.body, as: UTF8.self))")
            #expect(first.header("X-Pipeline-Source") == "made")
            #expect(Self.made(in: directory) == ["thumb/a-16.webp"])
            #expect(first.body == (try Data(contentsOf: directory.url.appendingPathComponent("out/thumb/a-16.webp"))))
            #expect(try VipsImage.open(data: first.body).width == 16)

            // When another width of the same output and format is asked for, that one is made
            let wider = try await server.request("/thumb/a.jpg?width=24", headers: ["Accept": "image/webp"])
            #expect(wider.header("X-Pipeline-Source") == "made")
            #expect(try VipsImage.open(data: wider.body).width == 24)
            #expect(Self.made(in: directory) == ["thumb/a-16.webp", "thumb/a-24.webp"])

            // And another output's file in another format: that one only
            let card = try await server.request("/card/a.jpg?width=12", headers: ["Accept": "image/avif"])
            #expect(card.status == 200)
            #expect(card.header("Content-Type") == "image/avif")
            #expect(try VipsImage.open(data: card.body).width == 12)
            #expect(Self.made(in: directory) == ["card/a-12.avif", "thumb/a-16.webp", "thumb/a-24.webp"])

            // And the first file, asked for again, is answered from disk, made once
            let again = try await server.request("/thumb/a.jpg?width=16", headers: ["Accept": "image/webp"])
            #expect(again.header("X-Pipeline-Source") == "disk")
            #expect(again.body == first.body)
        }
        // The manifest's entry of the input names every file made, from all three runs
        let manifest = try ImageManifest.read(from: directory.url.appendingPathComponent("site/images.json"))
        let entry = try #require(manifest.inputs.first { $0.source == "in/a.jpg" })
        let files = entry.outputs.flatMap { name, output in output.formats.flatMap(\.files).map { "\(name) \($0.width) \($0.format)" } }
        #expect(files.sorted() == ["card 12 avif", "thumb 16 webp", "thumb 24 webp"])
    }

    @Test func aWidthThatCannotBeWrittenIsAnErrorAndNotAnotherWidthsFile() async throws {
        // Given an output whose 16 px file cannot be put in its place (a folder is there), and
        // its 24 px file made
        let directory = try ServeTests.folder()
        try FileManager.default.removeItem(atPath: directory.path + "/in/sub")
        try FileManager.default.createDirectory(atPath: directory.path + "/out/16/a.webp", withIntermediateDirectories: true)
        let thumb = #"{"name": "thumb", "widths": [16, 24], "formats": [{"format": "webp"}], "path": "out/{width}/{stem}.{format}"}"#
        try await withServer(PipelineHarness.json(inputs: ["in/*.jpg"], outputs: [thumb]), in: directory) { server in
            let wider = try await server.request("/thumb/a.jpg?width=24", headers: ["Accept": "image/webp"])
            #expect(wider.status == 200)
            // When the 16 px file is asked for
            let narrow = try await server.request("/thumb/a.jpg?width=16", headers: ["Accept": "image/webp"])
            // Then the server says it could not make it, where it answered with the 24 px file,
            // under that file's ETag, which a cache would have kept at this URL
            #expect(narrow.status == 500, "\(narrow.status) \(narrow.header("ETag") ?? "")")
            #expect(narrow.header("ETag") == nil)
            #expect(String(decoding: narrow.body, as: UTF8.self).contains("could not store output thumb"))
        }
    }

    @Test func aBatchRunMakesOnlyWhatTheServerDidNot() async throws {
        let directory = try ServeTests.folder()
        try FileManager.default.removeItem(atPath: directory.path + "/in/sub")
        let json = Self.json()
        try await withServer(json, in: directory) { server in
            let thumb = try await server.request("/thumb/a.jpg?width=24", headers: ["Accept": "image/avif"])
            let card = try await server.request("/card/a.jpg?width=8", headers: ["Accept": "image/webp"])
            #expect(thumb.status == 200)
            #expect(card.status == 200)
        }
        let served = ["thumb/a-24.avif", "card/a-8.webp"]
        let before = try served.map { try Self.identity(directory.path + "/out/" + $0) }
        // When a batch run follows, it makes the six files the server did not, and leaves its two as they are
        let batch = try await PipelineHarness.run(json, in: directory)
        #expect(batch.summary.outputsWritten == 6)
        #expect(batch.summary.outputsUpToDate == 2)
        #expect(Self.made(in: directory).count == 8)
        #expect(try served.map { try Self.identity(directory.path + "/out/" + $0) } == before)
        // And a second batch run makes nothing
        let again = try await PipelineHarness.run(json, in: directory)
        #expect(again.summary.outputsWritten == 0)
        #expect(again.summary.outputsUpToDate == 8)
    }

    @Test func makeAllMakesEveryFileOnTheFirstRequest() async throws {
        let directory = try ServeTests.folder()
        try FileManager.default.removeItem(atPath: directory.path + "/in/sub")
        try await withServer(Self.json(serve: #""serve": {"makeAll": true}"#), in: directory) { server in
            let response = try await server.request("/thumb/a.jpg?width=16", headers: ["Accept": "image/webp"])
            #expect(response.status == 200)
            #expect(try VipsImage.open(data: response.body).width == 16)
            #expect(Self.made(in: directory).count == 8)
            // Every other file is then answered from disk
            let other = try await server.request("/card/a.jpg?width=8", headers: ["Accept": "image/avif"])
            #expect(other.header("X-Pipeline-Source") == "disk")
            #expect(await server.maker.runsStarted == 1)
        }
    }

    @Test func aWidthAboveTheImagesOwnIsTheFileMadeAtItsOwnWidth() async throws {
        let directory = try ServeTests.folder()
        try FileManager.default.removeItem(atPath: directory.path + "/in/sub")
        let photo =
            #"{"name": "photo", "widths": [16, 64, 96], "formats": [{"format": "webp"}], "path": "out/{stem}-{width}.{format}"}"#
        let json = PipelineHarness.json(inputs: ["in/*.jpg"], outputs: [photo])
        try await withServer(json, in: directory) { server in
            // When a width above the photo's 48 pixels is asked for
            let wide = try await server.request("/photo/a.jpg?width=96")
            // Then the file made at its own width answers, and it alone is made
            #expect(wide.status == 200)
            #expect(try VipsImage.open(data: wide.body).width == 48)
            #expect(Self.made(in: directory) == ["a-48.webp"])
            // And the widest (no width asked) is that same file, not made again
            let widest = try await server.request("/photo/a.jpg")
            #expect(widest.header("X-Pipeline-Source") == "disk")
            #expect(widest.body == wide.body)
            #expect(Self.made(in: directory) == ["a-48.webp"])
        }
    }

    @Test func requestsForSeveralInputsGoThroughTheServersOneSetOfStageQueues() async throws {
        let directory = try ServeTests.folder()
        try await withServer(ServeTests.json, in: directory) { server in
            // When two inputs are asked for at once, and the info of one
            async let first = server.request("/thumb/a.jpg")
            async let second = server.request("/thumb/sub%2Fb.jpg")
            let statuses = try await [first.status, second.status]
            #expect(statuses == [200, 200])
            let info = try await server.request("/info/a.jpg")
            #expect(info.status == 200)

            // Then both runs decoded and encoded on the server's queues, and the info read there
            let counts = server.maker.stages.counts
            #expect(counts[.decompress]?.done == 2, "\(counts)")
            #expect(counts[.encode]?.done == 2, "\(counts)")
            #expect((counts[.fetch]?.done ?? 0) >= 3, "\(counts)")
        }
    }

    @Test func artAsksForOneFileOfAnArtDirectionCrop() async throws {
        let directory = try ServeTests.folder()
        try FileManager.default.removeItem(atPath: directory.path + "/in/sub")
        let hero =
            #"{"name": "hero", "widths": [32], "formats": [{"format": "webp"}], "art": [{"media": "(max-width: 600px)", "aspectRatio": "1:1", "widths": [12, 16]}], "path": "out/hero/{stem}{art}-{width}.{format}"}"#
        let json = PipelineHarness.json(inputs: ["in/*.jpg"], outputs: [hero])
        try await withServer(json, in: directory) { server in
            // When one width of the square crop is asked for, that file alone is made: square
            let square = try await server.request("/hero/a.jpg?art=1:1&width=12")
            #expect(square.status == 200, "\(String(decoding: square.body, as: UTF8.self))")
            #expect(square.header("X-Pipeline-Source") == "made")
            let image = try VipsImage.open(data: square.body)
            #expect(image.width == 12 && image.height == 12)
            #expect(Self.made(in: directory) == ["hero/a-1x1-12.webp"])
            // And without a width, the crop's widest, named as its files are
            let widest = try await server.request("/hero/a.jpg?art=1x1")
            #expect(try VipsImage.open(data: widest.body).width == 16)
            #expect(Self.made(in: directory) == ["hero/a-1x1-12.webp", "hero/a-1x1-16.webp"])
            // And without art, the output's own file, uncropped
            let own = try await server.request("/hero/a.jpg")
            let whole = try VipsImage.open(data: own.body)
            #expect(whole.width == 32 && whole.height == 21)
            // And the crop asked for again is answered from disk
            #expect(try await server.request("/hero/a.jpg?art=1:1&width=12").header("X-Pipeline-Source") == "disk")
            // And a ratio the output has no crop of is refused, naming those it has
            let refused = try await server.request("/hero/a.jpg?art=4:5")
            #expect(refused.status == 400)
            #expect(String(decoding: refused.body, as: UTF8.self).contains("its crops are 1:1"))
        }
        // A batch run then finds the crops the requests made up to date, as their journal records them
        let batch = try await PipelineHarness.run(json, in: directory)
        #expect(batch.summary.outputsWritten == 0)
        #expect(batch.summary.outputsUpToDate == 3)
    }

    @Test func twoWidthsStandingInForATrimmedImageAnswerOneFileUnderOneTag() async throws {
        // Given a trimmed set whose two wider widths stand in for the image's own
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.boxedPNG(), to: "in/box.png")
        try await withServer(Fixtures.trimmedSetJSON(path: "out/t/{stem}-{width}.png"), in: directory) { server in
            // When the wider is asked for, then the narrower
            let wider = try await server.request("/t/box.png?width=640")
            let narrower = try await server.request("/t/box.png?width=100")

            // Then both are answered with the image's own width, under one tag, made once
            #expect(wider.status == 200)
            #expect(narrower.status == 200)
            #expect(try VipsImage.open(data: wider.body).width == 80)
            #expect(wider.header("ETag") != nil)
            #expect(narrower.header("ETag") == wider.header("ETag"))
            #expect(narrower.header("X-Pipeline-Source") == "disk")
        }
    }
}
#endif
