#if Faces
import FaceDetection
import Foundation
import PipelineKit
import StandardProcessors
import TestSupport
import Testing
import Vips
import VipsCrop
import VipsResize

/// `"position": "faces"`: OpenCV's cascade on a real photograph of a face.
@Suite("Face crops")
struct FaceCropTests {
    /// The astronaut photograph (320×320; see README.md beside it).
    static let photo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("astronaut.jpg").path

    /// The photograph near the right end of an 800×320 grey strip: a square cover crop about
    /// the centre misses the face.
    func strip() throws -> VipsImage {
        let face = try VipsImage.open(file: Self.photo)
        return try face.embedded(x: 470, y: 0, width: 800, height: 320, background: [128, 128, 128]).rendered()
    }

    func facesResize(_ width: Int, _ height: Int) throws -> Resize {
        try Resize(
            options: ProcessorOptions(
                values: ["width": JSONNode(plain: width), "height": JSONNode(plain: height), "position": JSONNode(plain: "faces")],
                definitions: Resize.options, faceFinder: CascadeFaceFinder()))
    }

    @Test func theCascadeFindsTheFace() throws {
        // Given the photograph, and the same in a strip where it is at the right
        let faces = try CascadeFaceFinder().faces(in: try VipsImage.open(file: Self.photo))
        // Then one face is found, in the upper middle, about a quarter of the width across
        #expect(faces.count == 1, "\(faces)")
        let face = try #require(faces.first)
        #expect((120...240).contains(face.left + face.width / 2) && (30...150).contains(face.top + face.height / 2), "\(face)")
        #expect((40...160).contains(face.width), "\(face)")
        // and in the strip it is where the photograph was put
        let inStrip = try CascadeFaceFinder().faces(in: try strip())
        #expect(inStrip.count == 1 && inStrip.allSatisfy { $0.left >= 470 }, "\(inStrip)")
    }

    /// A small image (an avatar) is searched enlarged to the finder's size: as it is, the
    /// cascade misses a face a few tens of pixels wide.
    @Test(arguments: [0.5, 0.4])
    func aFaceInASmallImageIsFound(scale: Double) throws {
        let small = try VipsImage.open(file: Self.photo).resized(horizontalScale: scale, verticalScale: scale, kernel: .lanczos3)
            .rendered()
        let faces = try CascadeFaceFinder().faces(in: small)
        #expect(faces.count == 1, "\(faces) in \(small.size)")
        let face = try #require(faces.first)
        let centre = (x: Double(face.left + face.width / 2) / scale, y: Double(face.top + face.height / 2) / scale)
        #expect((120...180).contains(centre.x) && (40...110).contains(centre.y), "\(face) at ×\(scale)")
    }

    /// Enlarged, the photograph also shows the cascade a second, false face at its shoulder,
    /// which it scores far below the real one: that one is dropped, and crops stay on the face.
    @Test(arguments: [2.0, 3.0, 4.0])
    func aFaceScoredFarBelowAnotherIsDropped(enlargement: Double) throws {
        let photo = try VipsImage.open(file: Self.photo)
        let enlarged = try photo.resized(horizontalScale: enlargement, verticalScale: enlargement, kernel: .lanczos3).rendered()
        let faces = try CascadeFaceFinder().faces(in: enlarged)
        #expect(faces.count == 1, "\(faces)")
        let face = try #require(faces.first)
        let centre = (x: Double(face.left + face.width / 2) / enlargement, y: Double(face.top + face.height / 2) / enlargement)
        #expect((120...170).contains(centre.x) && (50...100).contains(centre.y), "\(face) at ×\(enlargement)")
    }

    @Test func aCoverCropKeepsTheFace() throws {
        // Given the strip, with the face at its right end
        let image = try strip()
        let face = try #require(try CascadeFaceFinder().faces(in: image).first)
        // which a crop about the centre (columns 120 to 280 of the strip scaled to 400×160) cuts
        #expect(face.left / 2 + face.width / 2 > 280, "\(face)")

        // When it is cropped to a square about the faces
        let context = ProcessingContext(input: "strip", output: "square", originalSize: image.size)
        let square = try facesResize(160, 160).process(image, context: context)

        // Then the square is cut from the strip where the face is: the face's box, scaled by
        // the cover's half (320 rows to 160), lies inside the window the crop kept
        #expect(square.size == ImageSize(width: 160, height: 160))
        let scaled = try image.resized(horizontalScale: 0.5, verticalScale: 0.5, kernel: .lanczos3)
        let left = try #require(try Self.offset(of: square, in: scaled), "the square is no window of the scaled strip")
        #expect(left <= face.left / 2 && face.left / 2 + face.width / 2 <= left + 160, "window at \(left), face \(face)")
        // and the crop says it found a face
        #expect(context.notes.all == ["1 face found: cropped about it"])
    }

    /// Two faces too far apart for the window: the crop is about the largest, and says so.
    @Test func facesTooFarApartForTheCropAreSaidToBeCroppedAboutTheLargest() throws {
        // Given the photograph twice, one above the other: two faces 320 rows apart
        let photo = try VipsImage.open(file: Self.photo)
        let pair = try VipsImage.open(data: try VipsImage.stacking([photo, photo]).encoded(suffix: ".png"))
        let faces = try CascadeFaceFinder().faces(in: pair)
        try #require(faces.count == 2, "\(faces)")

        // When it is cropped to a banner 100 rows high about its faces
        let context = ProcessingContext(input: "pair", output: "banner", originalSize: pair.size)
        let banner = try facesResize(200, 100).process(pair, context: context)

        // Then the crop is the banner's size, and its note says it could not keep them all
        #expect(banner.size == ImageSize(width: 200, height: 100))
        #expect(context.notes.all == ["2 faces found, too far apart for the crop: cropped about the largest"])
    }

    @Test func aCropWindowAboutFacesKeepsTheFace() throws {
        // Given the strip, with the face at its right end, and a 320×320 window about its faces
        let image = try strip()
        let face = try #require(try CascadeFaceFinder().faces(in: image).first)
        let crop = try Crop(
            options: ProcessorOptions(
                values: ["width": JSONNode(plain: 320), "height": JSONNode(plain: 320), "gravity": JSONNode(plain: "faces")],
                definitions: Crop.options, faceFinder: CascadeFaceFinder()))
        let context = ProcessingContext(input: "strip", output: "square", originalSize: image.size)

        // When the strip is cropped, without scaling
        let square = try crop.process(image, context: context)

        // Then the window is the part of the strip that holds the face, and the crop says so
        #expect(square.size == ImageSize(width: 320, height: 320))
        let left = try #require(try Self.offset(of: square, in: image), "the square is no window of the strip")
        #expect(left <= face.left && face.left + face.width <= left + 320, "window at \(left), face \(face)")
        #expect(context.notes.all == ["1 face found: cropped about it"])
        // and a window as large as the strip keeps it whole without looking for faces
        let whole = ProcessingContext(input: "strip", output: "whole", originalSize: image.size)
        let kept = try Crop(mode: .window(width: 900, height: nil, position: .faces), faceFinder: CascadeFaceFinder())
            .process(image, context: whole)
        #expect(try kept.bytes() == image.bytes())
        #expect(whole.notes.all.isEmpty)
    }

    @Test func aCascadeThatCannotBeLoadedIsRefusedWhenTheFileIsChecked() throws {
        // Given the cascade file missing (opencv-data not installed), or not a cascade
        let directory = try TemporaryDirectory()
        try directory.write(Data("not a cascade\n".utf8), to: "bad.xml")
        let output =
            #"{"name": "sq", "steps": [{"resize": {"width": 100, "height": 100, "position": "faces"}}], "#
            + #""encode": {"format": "png"}, "path": "out/{stem}.png"}"#
        let json = PipelineHarness.json(inputs: ["in/*.jpg"], outputs: [output])
        for cascade in [directory.path + "/missing.xml", directory.path + "/bad.xml"] {
            let registry = ProcessorRegistry.standard.findingFaces(with: CascadeFaceFinder(cascade: cascade))
            // When a file cropping about faces is checked: it is refused once, at the position, not every input at its crop
            let error = try #require(throws: PipelineFileError.self) {
                try PipelineDefinition(json: json, baseDirectory: directory.url, processors: registry)
            }
            let problem = try #require(error.problems.first)
            #expect(error.problems.count == 1 && problem.path.hasSuffix("position"), "\(error)")
            #expect(problem.message.contains("cannot work here: cannot load the face cascade \(cascade): "), "\(problem.message)")
            #expect(problem.message.last?.isNewline == false, "\(problem.message)")
            // A file that cannot be read is said before OpenCV is asked, which would print a
            // line of its own on standard error
            if cascade.hasSuffix("missing.xml") {
                #expect(problem.message.hasSuffix("cannot read it: No such file or directory"), "\(problem.message)")
            }
        }
    }

    @Test func noFaceFallsBackToAttentionAndSaysSo() throws {
        // Given an image with no face
        let image = try Fixtures.gradient(width: 600, height: 200)
        let context = ProcessingContext(input: "noise", output: "square", originalSize: image.size)

        // When it is cropped to a square about the faces
        let square = try facesResize(100, 100).process(image, context: context)

        // Then the crop is attention's, and the note says so
        let attention = try Resize(width: 100, height: 100, position: .gravity(.attention)).process(image, context: context)
        #expect(try square.bytes() == attention.bytes())
        #expect(context.notes.all == ["no face found: cropped by attention"])
    }

    @Test func theTraceSaysWhenNoFaceWasFound() async throws {
        // Given a pipeline cropping a faceless image about its faces
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 300, height: 100)), to: "in/noise.jpg")
        let json = PipelineHarness.json(
            inputs: ["in/*.jpg"],
            outputs: [
                #"{"name": "square", "steps": [{"resize": {"width": 50, "height": 50, "position": "faces"}}], "encode": {"format": "jpeg"}, "path": "out/{stem}.jpg"}"#
            ])
        let pipeline = try PipelineHarness.pipeline(json, in: directory)
        let recorder = try RunRecorder(definition: pipeline.definition)

        // When it runs with a trace
        for await event in try pipeline.run() { recorder.record(event) }

        // Then the output's process step in the trace carries the note
        let trace = String(decoding: try recorder.traceJSON(), as: UTF8.self)
        #expect(trace.contains("no face found: cropped by attention"), "\(trace.prefix(2000))")
    }

    @Test func aSmallThumbnailIsSearchedAtTheFindersSize() async throws {
        // Given a 1600×800 JPEG whose face is about 260 pixels wide, and one output, a 100×100
        // square about its faces: a decode shrunk for the square alone would leave the face
        // about 30 pixels wide, too small for the cascade
        let directory = try TemporaryDirectory()
        let face = try VipsImage.open(file: Self.photo).resized(horizontalScale: 2, verticalScale: 2, kernel: .lanczos3)
        let photo = try face.embedded(x: 900, y: 100, width: 1600, height: 800, background: [120, 140, 160]).rendered()
        try directory.write(try Fixtures.jpeg(photo, quality: 92), to: "in/photo.jpg")
        let json = PipelineHarness.json(
            inputs: ["in/*.jpg"],
            outputs: [
                #"{"name": "avatar", "steps": [{"resize": {"width": 100, "height": 100, "position": "faces"}}], "encode": {"format": "jpeg"}, "path": "out/{stem}.jpg"}"#
            ])
        let pipeline = try PipelineHarness.pipeline(json, in: directory)
        #expect(try facesResize(100, 100).allowedInputShrink(for: photo.size) == 1600.0 / 640)
        let recorder = try RunRecorder(definition: pipeline.definition)

        // When it runs with a trace
        for await event in try pipeline.run() { recorder.record(event) }

        // Then the face is found, and the square is cut about it: most of it is the photograph
        // (a square about the centre would be under a third of it), little the flat ground
        let trace = String(decoding: try recorder.traceJSON(), as: UTF8.self)
        #expect(trace.contains("1 face found: cropped about it"), "\(trace.prefix(2000))")
        let square = try VipsImage.open(file: directory.path + "/out/photo.jpg")
        #expect(square.size == ImageSize(width: 100, height: 100))
        let pixels = try square.bytes()
        let ground: [Int] = [120, 140, 160]
        let onPhoto = stride(from: 0, to: pixels.count, by: 3).filter { offset in
            (0..<3).contains { abs(Int(pixels[offset + $0]) - ground[$0]) > 12 }
        }.count
        #expect(onPhoto > pixels.count / 3 / 2, "\(onPhoto) of 10000 pixels are the photograph's")
    }

    @Test func anArtCropTheImageBoundsIsCutAboutTheFaces() async throws {
        // Given the strip as a PNG, and an art entry wider than the strip allows, so that its
        // crop is the largest square the strip holds, cut by a resize of its own
        let directory = try TemporaryDirectory()
        let image = try strip()
        let face = try #require(try CascadeFaceFinder().faces(in: image).first)
        try directory.write(try Fixtures.png(image), to: "in/strip.png")
        let art = #"[{"media": "(max-width: 640px)", "aspectRatio": "1:1", "widths": [5000]}]"#
        let json = PipelineHarness.json(
            inputs: ["in/*.png"],
            outputs: [
                #"{"name": "hero", "widths": [400], "formats": ["png"], "art": \#(art), "steps": [{"resize": {"position": "faces"}}], "path": "out/{stem}{art}-{width}.{format}"}"#
            ])

        // When it runs
        let run = try await PipelineHarness.run(json, in: directory)

        // Then the square is made, unscaled, where the face is
        #expect(run.summary.failed == 0, "\(run.reports.flatMap(\.failures))")
        let square = try VipsImage.open(file: directory.path + "/out/strip-1x1-320.png")
        #expect(square.size == ImageSize(width: 320, height: 320))
        let left = try #require(try Self.offset(of: square, in: image), "the square is no window of the strip")
        #expect(left <= face.left && face.left + face.width <= left + 320, "window at \(left), face \(face)")
    }

    @Test func theStandardRegistryHasTheDetector() {
        #expect(ProcessorRegistry.standard.faceFinder is CascadeFaceFinder)
    }

    /// The left edge of the window of `haystack` that `needle` (as tall) closely matches.
    static func offset(of needle: VipsImage, in haystack: VipsImage) throws -> Int? {
        let (a, b) = (try needle.bytes(), try haystack.bytes())
        let bands = needle.bands
        func difference(at left: Int) -> Int {
            var total = 0
            for y in stride(from: 0, to: needle.height, by: 8) {
                for x in stride(from: 0, to: needle.width, by: 8) {
                    total += abs(Int(a[(y * needle.width + x) * bands]) - Int(b[(y * haystack.width + left + x) * bands]))
                }
            }
            return total
        }
        let best = (0...(haystack.width - needle.width)).min { difference(at: $0) < difference(at: $1) }
        return best.flatMap { difference(at: $0) < 4 * (needle.width / 8) * (needle.height / 8) ? $0 : nil }
    }
}
#endif
