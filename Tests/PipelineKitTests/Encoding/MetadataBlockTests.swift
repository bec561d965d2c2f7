import Foundation
import TestSupport
import Testing
import Vips

@testable import PipelineKit

/// Metadata that hides in another block, or comes from another image: the Photoshop block IPTC
/// travels in, EXIF kept as PNG text, an overlay's own fields; and the frame delays a GIF is
/// written with. Written by a real run, read back with libvips.
@Suite struct MetadataBlockTests {
    /// One Photoshop image resource: `8BIM`, the ID, an empty name padded to two bytes, the
    /// length and the data, padded to an even length.
    func resource(_ id: UInt16, _ data: [UInt8]) -> [UInt8] {
        Array("8BIM".utf8) + [UInt8(id >> 8), UInt8(id & 0xff), 0, 0] + HostileFixtures.bigEndian32(data.count) + data
            + (data.count % 2 == 1 ? [0] : [])
    }

    let header = Array("Photoshop 3.0\0".utf8)
    /// An IPTC-NAA record holding a credit line (dataset 2:110).
    let iptc: [UInt8] = [0x1c, 0x02, 0x6e, 0x00, 0x07] + Array("Example".utf8)

    func run(_ outputs: [String], input: Data, name: String, extra: [String: Data] = [:], settings: String = "") async throws -> (
        TemporaryDirectory, [ItemReport], RunSummary
    ) {
        let directory = try TemporaryDirectory()
        try directory.write(input, to: "in/" + name)
        for (path, data) in extra { try directory.write(data, to: path) }
        let (reports, summary) = try await PipelineHarness.run(
            PipelineHarness.json(inputs: ["in/*"], outputs: outputs, extra: settings), in: directory)
        #expect(summary.succeeded == 1, "\(reports.flatMap(\.failures))")
        return (directory, reports, summary)
    }

    @Test func aPhotoshopBlockKeepsItsIPTCRecordAloneWithTheHeaderItHad() {
        let thumbnail = resource(0x040C, Array(repeating: 7, count: 33))
        let exif = resource(0x0422, Array("Exif\0\0MM".utf8))
        #expect(PhotoshopResources.iptcOnly(header + thumbnail + resource(0x0404, iptc) + exif) == header + resource(0x0404, iptc))
        // A TIFF's block, which has no header, gets the one JPEG readers look for
        #expect(PhotoshopResources.iptcOnly(resource(0x0404, iptc) + thumbnail) == header + resource(0x0404, iptc))
        // and a bare record read from a big-endian TIFF, each 4 bytes reversed, is put right
        let reversed = stride(from: 0, to: iptc.count, by: 4).flatMap { iptc[$0..<($0 + 4)].reversed() }
        #expect(PhotoshopResources.iptcOnly(reversed) == header + resource(0x0404, iptc))
        // A resource with a name: one length byte and the name, padded to an even length
        let named = Array("8BIM".utf8) + [0x04, 0x04, 3] + Array("abc".utf8) + HostileFixtures.bigEndian32(iptc.count) + iptc
        #expect(PhotoshopResources.iptcOnly(header + thumbnail + named) == header + named)
        // None, or a block that cannot be read to its end, keeps nothing
        #expect(PhotoshopResources.iptcOnly(header + thumbnail + exif) == nil)
        #expect(PhotoshopResources.iptcOnly(header + Array(resource(0x0404, iptc).dropLast(4))) == nil)
        #expect(PhotoshopResources.iptcOnly(header + Array("8BIX".utf8) + resource(0x0404, iptc).dropFirst(4)) == nil)
    }

    @Test func keepingIPTCKeepsNotTheEditorsThumbnailNorItsEXIFCopy() async throws {
        // Given a JPEG whose Photoshop block holds an IPTC credit, a preview of the whole
        // picture and a copy of the EXIF block
        let block =
            header + resource(0x040C, Array(repeating: 7, count: 301)) + resource(0x0404, iptc) + resource(0x0422, Array("Exif".utf8))
        let photo = try Fixtures.gradient(width: 64, height: 48).settingBlobField("iptc-data", to: block).encoded(suffix: ".jpg")
        #expect(
            try VipsImage.open(data: photo).blobCopy("iptc-data") == block, "libvips no longer keeps the block: the test proves nothing")
        // When it is cropped, keeping IPTC
        let (directory, reports, _) = try await run(
            [
                #"{"name": "kept", "steps": [{"crop": {"width": 32, "height": 24}}], "encode": {"format": "jpeg", "keep": ["iptc"]}, "#
                    + #""path": "out/{stem}.jpg"}"#
            ], input: photo, name: "photo.jpg")
        // Then the output's block holds the credit alone, and nothing was said of it
        let out = try VipsImage.open(file: directory.path + "/out/photo.jpg")
        #expect(out.blobCopy("iptc-data") == header + resource(0x0404, iptc))
        #expect(reports.flatMap(\.written).flatMap(\.warnings).isEmpty)
    }

    @Test func aPhotoshopBlockWithoutIPTCIsDroppedWithAWarning() async throws {
        let block = header + resource(0x040C, Array(repeating: 7, count: 40))
        let photo = try Fixtures.gradient(width: 32, height: 24).settingBlobField("iptc-data", to: block).encoded(suffix: ".jpg")
        let (directory, reports, _) = try await run(
            [#"{"name": "kept", "encode": {"format": "jpeg", "keep": "all"}, "path": "out/{stem}.jpg"}"#], input: photo,
            name: "photo.jpg")
        #expect(try VipsImage.open(file: directory.path + "/out/photo.jpg").blobCopy("iptc-data") == nil)
        let warnings = reports.flatMap(\.written).flatMap(\.warnings)
        #expect(
            warnings.count == 1 && warnings.first?.contains("iptc-data (a Photoshop resource block without an IPTC record") == true,
            "\(warnings)")
    }

    @Test func aTIFFsPhotoshopBlockIsPublishedNeitherByDefaultNorFromAnOverlay() async throws {
        // Given a TIFF whose Photoshop block (tag 34377) holds an IPTC credit, a preview and an
        // XMP copy, and the same block on an overlay
        let block =
            header + resource(0x0404, iptc) + resource(0x040C, Array(repeating: 7, count: 41)) + resource(0x0424, Array("<x/>".utf8))
        let tiff = try Fixtures.gradient(width: 64, height: 48).settingBlobField("photoshop-data", to: block).encoded(suffix: ".tif")
        #expect(
            try VipsImage.open(data: tiff).blobCopy("photoshop-data") == block, "libvips no longer keeps the block: the test proves nothing"
        )
        // When it is written as TIFF by default and keeping IPTC, as a JPEG keeping IPTC, and a
        // PNG is written as TIFF with the overlay laid on it
        let (directory, reports, _) = try await run(
            [
                #"{"name": "plain", "encode": {"format": "tiff"}, "path": "out/{stem}-plain.tif"}"#,
                #"{"name": "iptc", "encode": {"format": "tiff", "keep": ["iptc"]}, "path": "out/{stem}-iptc.tif"}"#,
                #"{"name": "jpeg", "encode": {"format": "jpeg", "keep": ["iptc"]}, "path": "out/{stem}.jpg"}"#,
                #"{"name": "marked", "steps": [{"composite": {"image": "logo.tif"}}], "encode": {"format": "tiff", "keep": "all"}, "#
                    + #""path": "out/{stem}-marked.tif"}"#,
            ], input: Data(tiff), name: "photo.tif", extra: ["logo.tif": Data(tiff)])
        // Then no TIFF carries the block, those keeping IPTC say why, and the JPEG has the credit alone
        for name in ["plain", "iptc", "marked"] {
            #expect(try VipsImage.open(file: directory.path + "/out/photo-\(name).tif").blobCopy("photoshop-data") == nil, "\(name)")
        }
        #expect(try VipsImage.open(file: directory.path + "/out/photo.jpg").blobCopy("iptc-data") == header + resource(0x0404, iptc))
        let warnings = reports.flatMap(\.written).flatMap(\.warnings)
        #expect(
            warnings
                == ["iptc", "marked"].map { "in/photo.tif → \($0): dropped the metadata field photoshop-data, which tiff cannot write" },
            "\(warnings)")
    }

    @Test func aTIFFsBareIPTCRecordIsKeptInAJPEGInABlockOfItsOwn() async throws {
        // Given a TIFF whose IPTC record is its own tag (33723), as exiftool writes it
        let tiff = HostileFixtures.tiffDeclaring(width: 4, height: 4, iptc: iptc)
        #expect(try VipsImage.open(data: tiff).blobCopy("iptc-data") == iptc, "libvips no longer reads the tag: the test proves nothing")
        // When it is written as a JPEG keeping IPTC
        let (directory, reports, _) = try await run(
            [#"{"name": "jpeg", "encode": {"format": "jpeg", "keep": ["iptc"]}, "path": "out/{stem}.jpg"}"#], input: tiff,
            name: "photo.tif")
        // Then the JPEG holds it in the Photoshop block readers look for it in, and nothing is said
        #expect(try VipsImage.open(file: directory.path + "/out/photo.jpg").blobCopy("iptc-data") == header + resource(0x0404, iptc))
        #expect(reports.flatMap(\.written).flatMap(\.warnings).isEmpty)
    }

    @Test func exifKeptAsPNGTextGoesWithEXIFAndNoKeyIsCutAtASpace() async throws {
        // Given a PNG with EXIF in a text chunk, as ImageMagick and exiv2 write it, a creation
        // time (a key with a space) and an author: chunks libvips' saver cannot write as they are
        let plain = [UInt8](try Fixtures.gradient(width: 32, height: 24).encoded(suffix: ".png"))
        func text(_ key: String, _ value: String) -> [UInt8] {
            let typed = Array("tEXt".utf8) + Array(key.utf8) + [0] + Array(value.utf8)
            return HostileFixtures.bigEndian32(typed.count - 4) + typed + HostileFixtures.bigEndian32(Int(HostileFixtures.crc32(typed)))
        }
        let texts =
            text("Raw profile type exif", "\nexif\n      8\n457869660000\n") + text("Creation Time", "2026-12-04") + text("Author", "Jane")
        let png = Data(plain[..<33] + texts + plain[33...])
        #expect(try VipsImage.open(data: png).hasField("png-comment-0-Raw profile type exif"))
        // When it is written keeping XMP (which the text goes with), and keeping everything
        let (directory, reports, _) = try await run(
            [
                #"{"name": "xmp", "encode": {"format": "png", "keep": ["xmp"]}, "path": "out/{stem}-xmp.png"}"#,
                #"{"name": "all", "encode": {"format": "png", "keep": "all"}, "path": "out/{stem}-all.png"}"#,
            ], input: png, name: "texts.png")
        // Then XMP keeps the author alone: the EXIF is not XMP, and the time cannot keep its key
        let xmp = try VipsImage.open(file: directory.path + "/out/texts-xmp.png").fieldNames.filter { $0.hasPrefix("png-comment-") }
        #expect(xmp == ["png-comment-0-Author"], "\(xmp)")
        let all = try VipsImage.open(file: directory.path + "/out/texts-all.png").fieldNames.filter { $0.hasPrefix("png-comment-") }
        #expect(all == ["png-comment-0-Author"], "\(all)")
        // and what could not be written under its own key is said, for each output
        let warnings = reports.flatMap(\.written).flatMap(\.warnings)
        #expect(warnings.filter { $0.contains("png-comment-1-Creation Time (libvips writes a PNG text key") }.count == 2, "\(warnings)")
        #expect(warnings.filter { $0.contains("png-comment-0-Raw profile type exif") }.count == 1, "\(warnings)")
    }

    @Test(arguments: ["\"all\"", "[\"exif\", \"xmp\"]"])
    func anOverlaysOwnMetadataIsNotPublishedWithTheImagesItIsLaidOn(keep: String) async throws {
        // Given a photo without metadata, and a logo with a camera, an author and a text chunk
        let photo = try Fixtures.gradient(width: 64, height: 48).encoded(suffix: ".png")
        let logo = try Fixtures.solid(width: 16, height: 16).settingStringField("exif-ifd0-Make", to: "LogoCamera")
            .settingBlobField("xmp-data", to: Array("<x:xmpmeta xmlns:x='adobe:ns:meta/'>LogoAuthor</x:xmpmeta>".utf8))
            .settingStringField("png-comment-0-Author", to: "LogoAuthor").encoded(suffix: ".png")
        let logoImage = try VipsImage.open(data: Data(logo))
        #expect(logoImage.hasField("xmp-data") && logoImage.fieldNames.contains { $0.hasSuffix("-Author") })
        // When the logo is laid on it, keeping everything the file names
        let (directory, reports, _) = try await run(
            [
                #"{"name": "marked", "steps": [{"composite": {"image": "logo.png", "gravity": "southeast"}}], "#
                    + #""encode": {"format": "png", "keep": \#(keep)}, "path": "out/{stem}.png"}"#
            ], input: Data(photo), name: "photo.png", extra: ["logo.png": Data(logo)])
        // Then the output has none of the logo's metadata, and nothing is said of it
        let out = try VipsImage.open(file: directory.path + "/out/photo.png")
        let leaked = out.fieldNames.filter { ImageEncoder.metadataKind(of: $0) != nil && $0 != "icc-profile-data" }
        #expect(leaked.isEmpty, "\(leaked)")
        #expect(reports.flatMap(\.written).flatMap(\.warnings).isEmpty)
    }

    /// EXIF orientation, whether the decode turns by it, and what the kept XMP then says.
    @Test(arguments: [(6, true, "1"), (nil, true, "6"), (6, false, "6")] as [(Int?, Bool, String)])
    func keptXMPSaysTheOrientationTheImageWasWrittenIn(exif: Int?, autorotate: Bool, written: String) async throws {
        // Given a photo whose XMP says to turn it (6), and whose EXIF says so too or says nothing
        let packet =
            #"<x:xmpmeta xmlns:x='adobe:ns:meta/'><rdf:RDF xmlns:rdf='http://www.w3.org/1999/02/22-rdf-syntax-ns#'>"#
            + #"<rdf:Description xmlns:tiff='http://ns.adobe.com/tiff/1.0/' tiff:Orientation="6"/></rdf:RDF></x:xmpmeta>"#
        var photo = try Fixtures.gradient(width: 64, height: 48).settingBlobField("xmp-data", to: Array(packet.utf8))
        if let exif { photo = try photo.settingIntField("orientation", to: exif) }

        // When it is written keeping its XMP alone
        let (directory, _, _) = try await run(
            [#"{"name": "kept", "encode": {"format": "jpeg", "keep": ["xmp"]}, "path": "out/{stem}.jpg"}"#],
            input: Data(try photo.encoded(suffix: ".jpg")), name: "photo.jpg",
            settings: #""decompress": {"autorotate": \#(autorotate)}"#)

        // Then an image the decode turned upright says so in its XMP too, or a viewer reading it
        // would turn it again; one not turned keeps what its XMP said
        let out = try VipsImage.open(file: directory.path + "/out/photo.jpg")
        let xmp = String(decoding: try #require(out.blobCopy("xmp-data")), as: UTF8.self)
        let turned = exif == 6 && autorotate
        #expect(out.size == (turned ? ImageSize(width: 48, height: 64) : ImageSize(width: 64, height: 48)))
        #expect(xmp.contains(#"tiff:Orientation="\#(written)""#), "\(xmp)")
        #expect(xmp.components(separatedBy: "tiff:Orientation=").count == 2, "\(xmp)")
    }

    /// The packet's orientation is set wherever it is stated, in either form writers use.
    @Test(
        arguments: [
            // As an element, with blanks round the value
            ("<tiff:Orientation> 8 </tiff:Orientation>", "<tiff:Orientation>1</tiff:Orientation>"),
            // as attributes in either quote, each one
            (#"<d a='>' tiff:Orientation = ' 6' b tiff:Orientation="3"/>"#, #"<d a='>' tiff:Orientation = '1' b tiff:Orientation="1"/>"#),
            // not a name that only begins the same, nor a closing tag or an empty value
            (
                #"<d tiff:OrientationX="6"></tiff:Orientation><d tiff:Orientation="" tiff:Orientation="8">"#,
                #"<d tiff:OrientationX="6"></tiff:Orientation><d tiff:Orientation="" tiff:Orientation="1">"#
            ),
            // with blanks or attributes in its tag
            (
                #"<tiff:Orientation >6</tiff:Orientation><tiff:Orientation rdf:datatype="x#integer">3</tiff:Orientation>"#,
                #"<tiff:Orientation >1</tiff:Orientation><tiff:Orientation rdf:datatype="x#integer">1</tiff:Orientation>"#
            ),
            // and under another prefix the packet binds to the TIFF namespace
            (
                #"<d xmlns:t='http://ns.adobe.com/tiff/1.0/' t:Orientation="6"><t:Orientation>6</t:Orientation>"#,
                #"<d xmlns:t='http://ns.adobe.com/tiff/1.0/' t:Orientation="1"><t:Orientation>1</t:Orientation>"#
            ),
            // nor one that only ends the same, of another namespace
            (#"<d mytiff:Orientation="8" x:tiff:Orientation="8"><a:tiff:Orientation>8</a:tiff:Orientation>"#, nil),
            // nor the words of a text, a comment or a CDATA section
            (#"<d>tiff:Orientation="8"</d><!-- tiff:Orientation="8" --><![CDATA[<tiff:Orientation>8</tiff:Orientation>]]>"#, nil),
            // and a packet that already says 1, or says nothing, is left as it is
            (#"<d tiff:Orientation="1"><tiff:Orientation>1</tiff:Orientation>"#, nil),
            ("<x:xmpmeta/>", nil),
        ] as [(String, String?)])
    func anXMPPacketsOrientationIsSetWhereverItIsStated(packet: String, written: String?) {
        #expect(XMPOrientation.setting(1, in: Array(packet.utf8)).map { String(decoding: $0, as: UTF8.self) } == written)
    }

    /// A packet repeating the name, as a hostile file may, is set in one pass.
    @Test func aPacketRepeatingItsOrientationIsSetEverywhere() {
        let repeats = 100_000
        let packet = Array(("<d" + String(repeating: #" tiff:Orientation="6""#, count: repeats) + "/>").utf8)
        let written = XMPOrientation.setting(1, in: packet)
        #expect(written == Array(("<d" + String(repeating: #" tiff:Orientation="1""#, count: repeats) + "/>").utf8))
        #expect(XMPOrientation.setting(6, in: packet) == nil)
    }

    /// GIF holds a frame's delay in hundredths of a second in 16 bits.
    @Test(arguments: [
        // Frames of 10 ms or less show for a tenth of a second, as WebP and AVIF outputs do
        (".gif", [0, 10, 300], [100, 100, 300]),
        // and one of 11 to 19 ms for 20 ms, the shortest shown as written (one hundredth is a tenth)
        (".webp", [12, 14, 40], [20, 20, 40]),
        // and one of 700 s for 655.35 s, where 16 bits of hundredths would wrap round to 44.64 s
        (".webp", [700_000, 200, 300], [655_350, 200, 300]),
    ])
    func aGIFsFrameDelaysAreThoseItCanShow(suffix: String, delays: [Int], written: [Int]) async throws {
        // Given an animation of three frames with `delays`
        let animation = try HostileFixtures.frames(3, width: 20, height: 10) { [UInt8($0 * 100), 0, 0] }.settingFrameDelays(delays)
            .encoded(suffix: suffix)
        #expect(try VipsImage.open(data: Data(animation), options: "n=-1").frameDelays == delays)
        // When it is written as a GIF, keeping its frames
        let json = PipelineHarness.json(
            inputs: ["in/*"], outputs: [#"{"name": "gif", "encode": {"format": "gif"}, "path": "out/{stem}.gif"}"#],
            extra: #""decompress": {"animation": "keep"}"#)
        let directory = try TemporaryDirectory()
        try directory.write(Data(animation), to: "in/moving" + suffix)
        let (reports, summary) = try await PipelineHarness.run(json, in: directory)
        #expect(summary.succeeded == 1, "\(reports.flatMap(\.failures))")
        // Then the GIF's delays are those it can show
        #expect(try VipsImage.open(file: directory.path + "/out/moving.gif", options: "n=-1").frameDelays == written)
    }

    @Test(arguments: [".heic", ".avif"])
    func aHEIFsXMPPacketIsKeptWhenAskedForAndPublishedOtherwiseNowhere(suffix: String) async throws {
        // Given a HEIC or AVIF with an XMP packet, which libvips' HEIF loader gives as a MIME item,
        // saying orientation 6, which HEIF has readers ignore (libheif turns it by its own boxes)
        let packet =
            #"<?xpacket begin="" id="W5M0MpCehiHzreSzNTczkc9d"?><x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"><rdf:Description xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:tiff="http://ns.adobe.com/tiff/1.0/" dc:rights="PipelineTestRights" tiff:Orientation="6"/></rdf:RDF></x:xmpmeta><?xpacket end="w"?>"#
        let input = try Fixtures.gradient(width: 32, height: 24).settingBlobField("xmp-data", to: Array(packet.utf8)).encoded(
            suffix: suffix)
        #expect(try VipsImage.open(data: input).fieldNames.contains { $0.hasPrefix("heif-mime-") })
        // When it is made keeping XMP, and keeping nothing, the default
        let outputs = [
            #"{"name": "kept", "formats": [{"format": "jpeg", "keep": ["xmp"]}, {"format": "webp", "keep": "all"}], "path": "out/{stem}-kept.{format}"}"#,
            #"{"name": "plain", "formats": ["jpeg", "webp"], "path": "out/{stem}-plain.{format}"}"#,
        ]
        let (directory, reports, summary) = try await run(outputs, input: input, name: "photo" + suffix)
        #expect(summary.succeeded == 1, "\(reports.flatMap(\.failures))")
        // Then the packet is in the files that keep it, whole, and in no other
        for format in ["jpg", "webp"] {
            let kept = try VipsImage.open(file: directory.path + "/out/photo-kept.\(format)").blobCopy("xmp-data") ?? []
            #expect(String(decoding: kept, as: UTF8.self).contains("PipelineTestRights"), "\(format)")
            // saying the image it is with is upright, as it is
            #expect(String(decoding: kept, as: UTF8.self).contains(#"tiff:Orientation="1""#), "\(format)")
            let plain = try VipsImage.open(file: directory.path + "/out/photo-plain.\(format)")
            #expect(plain.blobCopy("xmp-data") == nil && !plain.fieldNames.contains { $0.hasPrefix("heif-mime-") }, "\(format)")
        }
    }
}
