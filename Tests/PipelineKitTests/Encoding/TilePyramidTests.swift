import Foundation
import StandardProcessors
import TestSupport
import Testing
import Vips

@testable import PipelineKit

/// Tile pyramid outputs (`"tiles"`): every level and tile written, each layout's descriptor,
/// nothing temporary left, incremental runs, the manifest, and clear errors for bad settings.
@Suite struct TilePyramidTests {
    /// A folder with a photo of `width`×`height` at `in/photo.jpg` and a pipeline with one tiles
    /// output (`tiles` its JSON object) at `path`.
    func setUp(width: Int = 1000, height: Int = 700, tiles: String, path: String, extra: String = "") throws -> (
        TemporaryDirectory, String
    ) {
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: width, height: height)), to: "in/photo.jpg")
        let json = PipelineHarness.json(
            inputs: ["in/*.jpg"], outputs: [#"{"name": "zoom", "tiles": \#(tiles), "path": "\#(path)"}"#], extra: extra)
        return (directory, json)
    }

    /// Every entry below `folder` (files and folders), relative to it.
    func entries(below folder: String) -> [String] {
        (try? FileManager.default.subpathsOfDirectory(atPath: folder)) ?? []
    }

    @Test(arguments: [(nil, nil), (256, 0), (100, 3)] as [(Int?, Int?)])
    func aDeepZoomPyramidOfAPhotoHasEveryLevelAndEveryTile(size: Int?, overlap: Int?) async throws {
        var options = [#""layout": "dz""#]
        if let size { options.append(#""size": \#(size)"#) }
        if let overlap { options.append(#""overlap": \#(overlap)"#) }
        let (directory, json) = try setUp(tiles: "{" + options.joined(separator: ", ") + "}", path: "out/{stem}.dzi")
        let (reports, summary) = try await PipelineHarness.run(json, in: directory)
        #expect(summary.failed == 0, "\(reports.flatMap(\.failures))")
        #expect(summary.outputsWritten == 1)

        // libvips' own defaults for DeepZoom: 254-pixel tiles overlapping by one.
        let expected = DeepZoomExpectation.tiles(width: 1000, height: 700, size: size ?? 254, overlap: overlap ?? 1, extension: "jpg")
        let out = directory.path + "/out"
        #expect(TemporaryDirectory.files(below: out) == (["photo.dzi"] + expected.keys.map { "photo_files/" + $0 }).sorted())
        for (tile, dimensions) in expected {
            let image = try VipsImage.open(file: out + "/photo_files/" + tile)
            #expect(image.width == dimensions.width && image.height == dimensions.height, "\(tile)")
        }
        let dzi = try String(contentsOfFile: out + "/photo.dzi", encoding: .utf8)
        #expect(dzi.contains(#"TileSize="\#(size ?? 254)""#) && dzi.contains(#"Overlap="\#(overlap ?? 1)""#), "\(dzi)")
        #expect(DeepZoomExpectation.declaredSize(ofDZI: out + "/photo.dzi").map { [$0.width, $0.height] } == [1000, 700])
        #expect(!entries(below: out).contains { $0.contains(ImageWriter.temporaryMarker) })
        let written = try #require(reports.first?.written.first)
        #expect(written.path == out + "/photo.dzi" && written.size == ImageSize(width: 1000, height: 700))
        #expect(written.byteCount == TilePyramidWriter.contents(below: out, tilesIn: .jpeg).bytes && written.byteCount > 0)
    }

    @Test func eachFolderLayoutWritesItsDescriptorAndTiles() async throws {
        let layouts: [(layout: String, files: [String])] = [
            ("iiif", ["info.json", "0,0,512,512/512,/0/default.jpg"]),
            ("iiif3", ["info.json", "0,0,512,512/512,512/0/default.jpg"]),
            ("zoomify", ["ImageProperties.xml", "TileGroup0/0-0-0.jpg"]),
            ("google", ["blank.png", "0/0/0.jpg"]),
        ]
        for (layout, files) in layouts {
            let (directory, json) = try setUp(tiles: #"{"layout": "\#(layout)", "format": "jpeg", "quality": 70}"#, path: "out/{stem}")
            let (reports, summary) = try await PipelineHarness.run(json, in: directory)
            #expect(summary.failed == 0, "\(layout): \(reports.flatMap(\.failures))")
            let all = TemporaryDirectory.files(below: directory.path + "/out/photo")
            // A run that finds the pyramid up to date reports the bytes the first wrote, not
            // its folder's own size
            let written = try #require(reports.first?.written.first)
            let (again, _) = try await PipelineHarness.run(json, in: directory)
            let kept = try #require(again.first?.written.first)
            #expect(kept.upToDate && kept.byteCount == written.byteCount && written.byteCount > 4096, "\(layout)")
            for file in files {
                #expect(all.contains(file), "\(layout): no \(file) in \(all.prefix(20))")
            }
            #expect(!all.contains { $0.hasSuffix("vips-properties.xml") }, "\(layout)")
            #expect(!entries(below: directory.path + "/out").contains { $0.contains(ImageWriter.temporaryMarker) }, "\(layout)")
            if layout.hasPrefix("iiif") {
                let info = try String(contentsOfFile: directory.path + "/out/photo/info.json", encoding: .utf8)
                #expect(info.contains(#""width": 1000"#) && info.contains(#""height": 700"#), "\(info)")
                #expect(info.contains(layout == "iiif3" ? "ImageService3" : "image/2/context.json"))
            }
            if layout == "zoomify" {
                let properties = try String(contentsOfFile: directory.path + "/out/photo/ImageProperties.xml", encoding: .utf8)
                #expect(properties.contains(#"WIDTH="1000""#) && properties.contains(#"HEIGHT="700""#), "\(properties)")
            }
        }
    }

    /// A IIIF pyramid's `info.json` names the image by the URL it is served under, so a viewer
    /// asks there for its tiles; libvips' placeholder host without `id`.
    @Test(arguments: ["jpeg", "png", "webp"]) func tilesCarryNoMetadataOfTheInput(format: String) async throws {
        // Given a photo whose EXIF block has a camera name and a GPS field
        let (directory, json) = try setUp(tiles: #"{"layout": "dz", "format": "\#(format)"}"#, path: "out/{stem}.dzi")
        let photo = try Fixtures.gradient(width: 1000, height: 700).settingStringField("exif-ifd0-Make", to: "PipelineTestCamera")
            .settingStringField("exif-ifd3-GPSLatitudeRef", to: "N")
        try directory.write(try photo.encoded(suffix: ".jpg[Q=90]"), to: "in/photo.jpg")
        #expect(try VipsImage.open(file: directory.path + "/in/photo.jpg").stringField("exif-ifd0-Make") != nil)

        // When its pyramid is written
        let (reports, summary) = try await PipelineHarness.run(json, in: directory)
        #expect(summary.failed == 0, "\(reports.flatMap(\.failures))")

        // Then no tile carries either
        let tiles = entries(below: directory.path + "/out/photo_files").filter { $0.contains(".") }
        #expect(!tiles.isEmpty)
        for tile in tiles {
            let image = try VipsImage.open(file: directory.path + "/out/photo_files/" + tile)
            #expect(image.stringField("exif-ifd0-Make") == nil && image.stringField("exif-ifd3-GPSLatitudeRef") == nil, "\(tile)")
        }
    }

    @Test func anIIIFPyramidsInfoGivesTheIDItIsServedUnder() async throws {
        for (layout, key) in [("iiif", "@id"), ("iiif3", "id")] {
            let (directory, json) = try setUp(
                tiles: #"{"layout": "\#(layout)", "id": "https://images.example.org/iiif/"}"#, path: "out/{stem}")
            let (reports, summary) = try await PipelineHarness.run(json, in: directory)
            #expect(summary.failed == 0, "\(layout): \(reports.flatMap(\.failures))")
            let info = try Data(contentsOf: URL(fileURLWithPath: directory.path + "/out/photo/info.json"))
            let object = try #require(try JSONSerialization.jsonObject(with: info) as? [String: Any])
            #expect(object[key] as? String == "https://images.example.org/iiif/photo", "\(layout): \(object)")
        }
        let (directory, json) = try setUp(tiles: #"{"layout": "iiif"}"#, path: "out/{stem}")
        _ = try await PipelineHarness.run(json, in: directory)
        let info = try String(contentsOfFile: directory.path + "/out/photo/info.json", encoding: .utf8)
        #expect(info.contains("https://example.com/iiif/photo"), "\(info)")
        // A name with a quote, a hash or a percent sign is one segment of the id's URL
        try FileManager.default.moveItem(atPath: directory.path + "/in/photo.jpg", toPath: directory.path + "/in/a\"b#c%.jpg")
        _ = try await PipelineHarness.run(json, in: directory)
        let odd = try Data(contentsOf: URL(fileURLWithPath: directory.path + "/out/a\"b#c%/info.json"))
        let object = try #require(try JSONSerialization.jsonObject(with: odd) as? [String: Any])
        #expect(object["@id"] as? String == "https://example.com/iiif/a%22b%23c%25", "\(object)")
        // and so is a line break, which libvips writes as it is, in either version
        for (layout, key) in [("iiif", "@id"), ("iiif3", "id")] {
            let (directory, json) = try setUp(tiles: #"{"layout": "\#(layout)"}"#, path: "out/{stem}")
            try FileManager.default.moveItem(atPath: directory.path + "/in/photo.jpg", toPath: directory.path + "/in/new\nline.jpg")
            _ = try await PipelineHarness.run(json, in: directory)
            let broken = try Data(contentsOf: URL(fileURLWithPath: directory.path + "/out/new\nline/info.json"))
            let object = try JSONSerialization.jsonObject(with: broken) as? [String: Any]
            #expect(
                object?[key] as? String == "https://example.com/iiif/new%0Aline", "\(layout): \(String(decoding: broken, as: UTF8.self))")
        }
    }

    /// `scaleFactors` lists every level written, the top one too: libvips left it out, so a
    /// photo that fits one tile listed none, and viewers could not open it.
    @Test(arguments: [
        (100, 60, [1]), (512, 300, [1]), (513, 300, [1, 2]), (1000, 700, [1, 2]), (700, 1100, [1, 2, 4]),
    ])
    func anIIIFInfoListsTheScaleOfEveryLevelWritten(width: Int, height: Int, factors: [Int]) async throws {
        for layout in ["iiif", "iiif3"] {
            let (directory, json) = try setUp(width: width, height: height, tiles: #"{"layout": "\#(layout)"}"#, path: "out/{stem}")
            let (reports, summary) = try await PipelineHarness.run(json, in: directory)
            #expect(summary.failed == 0, "\(layout): \(reports.flatMap(\.failures))")
            let info = try Data(contentsOf: URL(fileURLWithPath: directory.path + "/out/photo/info.json"))
            let object = try #require(try JSONSerialization.jsonObject(with: info) as? [String: Any])
            let tiles = try #require((object["tiles"] as? [[String: Any]])?.first, "\(layout): \(object)")
            #expect(tiles["scaleFactors"] as? [Int] == factors, "\(layout) \(width)×\(height): \(tiles)")
            // The top level's tile is there: the whole image, at its scale.
            let top = factors[factors.count - 1]
            let (topWidth, topHeight) = ((width + top - 1) / top, (height + top - 1) / top)
            let whole = "out/photo/0,0,\(width),\(height)/\(topWidth),\(layout == "iiif3" ? String(topHeight) : "")"
            let written = entries(below: directory.path + "/out/photo")
            #expect(FileManager.default.fileExists(atPath: directory.path + "/" + whole), "\(layout): \(written)")
        }
    }

    @Test func aRerunWritesNothingAndAChangedInputRewritesThePyramid() async throws {
        let (directory, json) = try setUp(tiles: #"{"layout": "dz", "format": "png"}"#, path: "out/{stem}.dzi")
        let out = directory.path + "/out"
        _ = try await PipelineHarness.run(json, in: directory)
        var before = stat()
        #expect(stat(out + "/photo.dzi", &before) == 0)
        let tilesBefore = TemporaryDirectory.files(below: out)

        let again = try await PipelineHarness.run(json, in: directory)
        #expect(again.summary.outputsWritten == 0 && again.summary.outputsUpToDate == 1)
        var after = stat()
        #expect(stat(out + "/photo.dzi", &after) == 0)
        #expect(after.st_ino == before.st_ino && after.st_mtim.tv_nsec == before.st_mtim.tv_nsec)
        #expect(TemporaryDirectory.files(below: out) == tilesBefore)

        // The tiles' folder gone while the .dzi stays: the pyramid is not in place, and is made again.
        try FileManager.default.removeItem(atPath: out + "/photo_files")
        let repaired = try await PipelineHarness.run(json, in: directory)
        #expect(repaired.summary.outputsWritten == 1)
        #expect(TemporaryDirectory.files(below: out) == tilesBefore)

        // A smaller photo has fewer levels: the old pyramid's extra ones must not stay behind.
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 300, height: 200)), to: "in/photo.jpg")
        let changed = try await PipelineHarness.run(json, in: directory)
        #expect(changed.summary.outputsWritten == 1)
        let expected = DeepZoomExpectation.tiles(width: 300, height: 200, size: 254, overlap: 1, extension: "png")
        #expect(TemporaryDirectory.files(below: out) == (["photo.dzi"] + expected.keys.map { "photo_files/" + $0 }).sorted())
        #expect(DeepZoomExpectation.declaredSize(ofDZI: out + "/photo.dzi").map { [$0.width, $0.height] } == [300, 200])
        #expect(!entries(below: out).contains { $0.contains(ImageWriter.temporaryMarker) })
    }

    @Test func aFolderLayoutIsReplacedWholeAndUpToDateWhenUnchanged() async throws {
        let (directory, json) = try setUp(tiles: #"{"layout": "zoomify"}"#, path: "out/{stem}")
        _ = try await PipelineHarness.run(json, in: directory)
        let again = try await PipelineHarness.run(json, in: directory)
        #expect(again.summary.outputsWritten == 0 && again.summary.outputsUpToDate == 1)
        try FileManager.default.removeItem(atPath: directory.path + "/out/photo/ImageProperties.xml")
        let repaired = try await PipelineHarness.run(json, in: directory)
        #expect(repaired.summary.outputsWritten == 1)
        #expect(FileManager.default.fileExists(atPath: directory.path + "/out/photo/ImageProperties.xml"))
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 200, height: 100)), to: "in/photo.jpg")
        let changed = try await PipelineHarness.run(json, in: directory)
        #expect(changed.summary.outputsWritten == 1)
        // 200×100 fits one 256-pixel tile: Zoomify's pyramid stops at the level that fits one
        // tile, so the old pyramid's many levels are all gone.
        #expect(
            TemporaryDirectory.files(below: directory.path + "/out").sorted() == [
                "photo/ImageProperties.xml", "photo/TileGroup0/0-0-0.jpg",
            ])
    }

    @Test func theManifestListsThePyramid() async throws {
        let (directory, json) = try setUp(
            tiles: #"{"layout": "dz", "format": "webp", "quality": 60}"#, path: "site/tiles/{stem}.dzi",
            extra: #""manifest": {"path": "site/images.json", "urlPrefix": "/img/"}"#)
        _ = try await PipelineHarness.run(json, in: directory)
        let manifest = try ImageManifest.read(from: directory.url.appendingPathComponent("site/images.json"))
        let output = try #require(manifest.input("in/photo.jpg")?.outputs["zoom"])
        #expect(output.formats.isEmpty && output.fallback == nil)
        let tiles = try #require(output.tiles)
        #expect(tiles.layout == "dz" && tiles.path == "tiles/photo.dzi" && tiles.url == "/img/tiles/photo.dzi")
        #expect(tiles.width == 1000 && tiles.height == 700 && tiles.tileSize == 254 && tiles.overlap == 1)
        #expect(tiles.format == "webp" && tiles.mimeType == "image/webp")
        #expect(tiles.bytes == TilePyramidWriter.contents(below: directory.path + "/site/tiles", tilesIn: .jpeg).bytes)
    }

    @Test func aKilledRunsTemporaryFolderIsSweptAndALiveOneKept() throws {
        let directory = try TemporaryDirectory()
        let dead = try TemporaryFileSweeperTests.deadProcessID()
        let leftover = directory.path + "/.photo.dzi\(ImageWriter.temporaryMarker)\(dead)-\(ImageWriter.machineTag)-0badc0de"
        let live = directory.path + "/.photo.dzi\(ImageWriter.temporaryMarker)\(getpid())-\(ImageWriter.machineTag)-5eed5eed"
        for folder in [leftover, live] {
            try TemporaryFileSweeperTests.touch(folder + "/photo_files/0/0_0.jpg")
            try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -60)], ofItemAtPath: folder)
        }
        let removed = TemporaryFileSweeper.sweep(folder: directory.path, depth: 0, olderThan: Date())
        #expect(removed == [leftover])
        #expect(!FileManager.default.fileExists(atPath: leftover))
        #expect(FileManager.default.fileExists(atPath: live + "/photo_files/0/0_0.jpg"))
    }

    @Test func theMemoryEstimateCountsThePyramidsStripsNotAWholeImageEncoder() throws {
        let tiles = TileSettings(layout: .dz)
        var output = OutputDefinition(name: "zoom", steps: [], encoder: tiles.encoder, path: try PathTemplate("out/{stem}.dzi"))
        output.tiles = tiles
        let size = ImageSize(width: 20000, height: 20000)
        // Strips of every level: about four image widths of 256 rows at 4 bytes, plus the encoders.
        #expect(output.encodingBytes(size: size, alpha: false) == 4_000_000 + 2 * (2 * 20000 + 254) * 256 * 4)
        #expect(output.encodingBytes(size: size, alpha: false) < 100_000_000)
    }

    // MARK: Bad settings

    func problems(_ output: String) -> [PipelineFileError.Problem] {
        PipelineHarness.problems(PipelineHarness.json(inputs: ["in/*.jpg"], outputs: [output]))
    }

    @Test(arguments: [
        (
            #"{"name": "z", "tiles": {"layout": "dz"}, "path": "out/{stem}"}"#, "outputs[0].path",
            "a DeepZoom pyramid's path names its .dzi file"
        ),
        (
            #"{"name": "z", "tiles": {"layout": "iiif"}, "path": "out/{stem}.dzi"}"#, "outputs[0].path",
            "the iiif layout writes a folder, so the path names the folder"
        ),
        (
            #"{"name": "z", "tiles": {"layout": "dz", "size": 100, "overlap": 100}, "path": "out/{stem}.dzi"}"#,
            "outputs[0].tiles.overlap", "the overlap (100) must be less than the tile size (100)"
        ),
        (
            #"{"name": "z", "tiles": {"layout": "google", "overlap": 16}, "path": "out/{stem}"}"#,
            "outputs[0].tiles.overlap", "only the dz layout overlaps its tiles: google tiles lie side by side"
        ),
        (
            #"{"name": "z", "tiles": {"layout": "dz", "format": "png", "quality": 50}, "path": "out/{stem}.dzi"}"#,
            "outputs[0].tiles.quality", "png tiles are lossless"
        ),
        (
            #"{"name": "z", "tiles": {"layout": "deepzoom"}, "path": "out/{stem}.dzi"}"#, "outputs[0].tiles.layout",
            "unknown value \"deepzoom\""
        ),
        (
            #"{"name": "z", "tiles": {"size": 0}, "path": "out/{stem}.dzi"}"#, "outputs[0].tiles.size", "out of range"
        ),
        (
            #"{"name": "z", "tiles": {}, "encode": {"format": "jpeg"}, "path": "out/{stem}.dzi"}"#, "outputs[0].encode",
            "give tiles or encode, not both"
        ),
        (
            #"{"name": "z", "tiles": {}, "widths": [100, 200], "path": "out/{stem}-{width}.dzi"}"#, "outputs[0].widths",
            "leave out widths"
        ),
        (
            #"{"name": "z", "tiles": {}, "placeholders": ["lqip"], "path": "out/{stem}.dzi"}"#, "outputs[0].placeholders",
            "a tiles output writes none"
        ),
        (
            #"{"name": "z", "tiles": {}, "path": "s3://bucket/{stem}.dzi"}"#, "outputs[0].path", "not to S3"
        ),
        (
            #"{"name": "z", "tiles": {"id": "https://images.example.org/iiif"}, "path": "out/{stem}.dzi"}"#, "outputs[0].tiles.id",
            "only the iiif and iiif3 layouts give an id"
        ),
        (
            #"{"name": "z", "tiles": {"layout": "iiif", "id": "images/iiif"}, "path": "out/{stem}"}"#, "outputs[0].tiles.id",
            "expected an http(s) URL"
        ),
    ])
    func badTileSettingsAreErrorsNamingTheirJSONPath(output: String, path: String, message: String) {
        let found = problems(output)
        #expect(found.contains { $0.path == path && $0.message.contains(message) }, "\(found)")
    }

    @Test func tilesNeedNoEncodeAndDefaultToLibvipsDeepZoomSettings() throws {
        let json = PipelineHarness.json(inputs: ["in/*.jpg"], outputs: [#"{"name": "z", "tiles": {}, "path": "out/{stem}.dzi"}"#])
        let definition = try PipelineDefinition(json: json, baseDirectory: URL(fileURLWithPath: "/tmp"), processors: .standard)
        let tiles = try #require(definition.outputs.first?.tiles)
        #expect(tiles == TileSettings(layout: .dz, size: 254, overlap: 1, format: .jpeg, quality: 80))
        #expect(definition.outputs.first?.encoder.format == .jpeg)
    }
}

/// The order of the renames that replace a pyramid, seen after each one as a reader would see it.
@Suite struct TilePyramidReplacementTests {
    /// Writes the pyramid of a `width`×`height` photo for `path` and returns it uncommitted.
    func pyramid(width: Int, height: Int, layout: TileSettings.Layout, path: String, root: String) throws
        -> TilePyramidWriter
        .UncommittedPyramid
    {
        let image = try Fixtures.gradient(width: width, height: height)
        let pending = try TilePyramidWriter.writeUncommitted(
            image, settings: TileSettings(layout: layout, format: .png), to: path, root: root, protecting: ProtectedInputs())
        try pending.flush()
        return pending
    }

    @Test func aDZIIsNeverBesideTilesItDoesNotDescribe() throws {
        let directory = try TemporaryDirectory()
        let out = directory.path + "/out"
        let path = out + "/photo.dzi"
        _ = try pyramid(width: 600, height: 400, layout: .dz, path: path, root: directory.path).moveIntoPlace()
        #expect(DeepZoomExpectation.problem(in: out, sizes: [(600, 400)], extension: "png") == nil)

        var replacing = try pyramid(width: 1000, height: 700, layout: .dz, path: path, root: directory.path)
        let seen = Locked<[String]>([])
        replacing.afterEachRename = {
            let state =
                DeepZoomExpectation.problem(in: out, sizes: [(600, 400), (1000, 700)], extension: "png")
                ?? DeepZoomExpectation.declaredSize(ofDZI: path).map { "\($0.width)×\($0.height)" } ?? "none"
            seen.withLock { $0.append(state) }
        }
        _ = try replacing.moveIntoPlace()
        // The old .dzi moved away, the tiles exchanged, the new .dzi in: old, none, none, new.
        #expect(seen.withLock { $0 } == ["none", "none", "1000×700"])
        #expect(DeepZoomExpectation.problem(in: out, sizes: [(1000, 700)], extension: "png") == nil)
        #expect(TemporaryDirectory.files(below: out).allSatisfy { $0 == "photo.dzi" || $0.hasPrefix("photo_files/") })
        #expect(!((try? FileManager.default.contentsOfDirectory(atPath: out)) ?? []).contains { $0.contains(ImageWriter.temporaryMarker) })
    }

    @Test(arguments: [true, false])
    func aPyramidWhoseFolderIsMovedBeforeItsCommitLeavesNothingInTheMovedFolder(committed: Bool) throws {
        let directory = try TemporaryDirectory()
        let pending = try pyramid(width: 600, height: 400, layout: .dz, path: directory.path + "/out/photo.dzi", root: directory.path)
        // Someone moves the output folder away while the pyramid waits for its commit.
        try FileManager.default.moveItem(atPath: directory.path + "/out", toPath: directory.path + "/elsewhere")
        if committed {
            #expect(throws: ItemError.self) { try pending.moveIntoPlace() }
        } else {
            pending.discard()
        }
        let left = try FileManager.default.subpathsOfDirectory(atPath: directory.path)
        #expect(left == ["elsewhere"], "left: \(left)")
    }

    @Test func aFolderLayoutIsExchangedInOneRename() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/out/photo"
        _ = try pyramid(width: 600, height: 400, layout: .iiif, path: path, root: directory.path).moveIntoPlace()
        var replacing = try pyramid(width: 1000, height: 700, layout: .iiif, path: path, root: directory.path)
        let seen = Locked<[String]>([])
        replacing.afterEachRename = {
            let info = (try? String(contentsOfFile: path + "/info.json", encoding: .utf8)) ?? ""
            seen.withLock { $0.append(info.contains(#""width": 1000"#) ? "new" : info.contains(#""width": 600"#) ? "old" : "none") }
        }
        _ = try replacing.moveIntoPlace()
        #expect(seen.withLock { $0 } == ["new"])
        #expect(!((try? FileManager.default.contentsOfDirectory(atPath: directory.path + "/out")) ?? []).contains { $0.hasPrefix(".") })
    }
}
