import Foundation
import PipelineKit
import Testing
import Vips

@Suite("Placeholders")
struct PlaceholderTests {

    private func gradient(width: Int, height: Int, bands: Int = 3) throws -> VipsImage {
        try Fixtures.image(width: width, height: height, bands: bands) { x, y in
            let colour = [UInt8(x * 255 / max(width - 1, 1)), UInt8(y * 255 / max(height - 1, 1)), 128]
            return bands == 4 ? colour + [UInt8(x < width / 2 ? 255 : 64)] : colour
        }
    }

    /// The image a `data:image/webp;base64,` URI holds.
    private func decodedLQIP(_ uri: String) throws -> VipsImage {
        let prefix = "data:image/webp;base64,"
        try #require(uri.hasPrefix(prefix), "\(uri.prefix(40))")
        let data = try #require(Data(base64Encoded: String(uri.dropFirst(prefix.count))))
        let image = try VipsImage.open(data: data)
        #expect(image.loader?.hasPrefix("webpload") == true)
        return image
    }

    // MARK: LQIP

    @Test(arguments: [(200, 100), (90, 160), (1000, 3), (17, 1000)])
    func lqipIsAWebPDataURIAtMost16WideWithTheSameAspectRatio(width: Int, height: Int) throws {
        // Given an image wider than 16 pixels
        let image = try gradient(width: width, height: height)

        // When its LQIP is made
        let lqip = try decodedLQIP(Placeholders.lqip(of: image))

        // Then it is 16 wide, and its height is the original's scaled alike, rounded
        #expect(lqip.width == 16)
        let exactHeight = Double(height) * 16 / Double(width)
        #expect(abs(Double(lqip.height) - exactHeight) <= 0.5 || lqip.height == 1, "\(lqip.width)×\(lqip.height)")
        #expect(lqip.height >= 1)
    }

    @Test func lqipOfANarrowImageKeepsItsSize() throws {
        let lqip = try decodedLQIP(Placeholders.lqip(of: gradient(width: 10, height: 6)))
        #expect(lqip.width == 10 && lqip.height == 6)
    }

    @Test(arguments: [(20, 30_000, 1, 1024), (3, 20_000, 1, 1024), (40, 2048, 16, 819), (2, 3000, 1, 1024)])
    func lqipOfAVeryTallImageIsAtMostTheLongestSideTall(width: Int, height: Int, lqipWidth: Int, lqipHeight: Int) throws {
        // Given an image taller than an LQIP 16 wide (or as wide as it) could be, up to 1:10,000
        let image = try gradient(width: width, height: height)

        // When its LQIP is made, Then it is 1024 tall at most, a pixel wide at least
        let lqip = try decodedLQIP(Placeholders.lqip(of: image))
        #expect(lqip.width == lqipWidth && lqip.height == lqipHeight, "\(lqip.width)×\(lqip.height)")
    }

    @Test func lqipWidthAndQualityAreSettings() throws {
        // Given an image, and settings for an 8 px LQIP at two qualities
        let image = try gradient(width: 300, height: 200)

        // When the LQIPs are made
        let low = try Placeholders(of: image, kinds: [.lqip], settings: PlaceholderSettings(lqipWidth: 8, lqipQuality: 5))
        let high = try Placeholders(of: image, kinds: [.lqip], settings: PlaceholderSettings(lqipWidth: 8, lqipQuality: 100))

        // Then they are 8 × 5 (200 × 8 / 300 = 5.3) and differ by their quality
        let lowImage = try decodedLQIP(try #require(low.lqip))
        #expect(lowImage.width == 8 && lowImage.height == 5)
        #expect(low.lqip != high.lqip)
    }

    @Test func lqipKeepsAlpha() throws {
        let lqip = try decodedLQIP(Placeholders.lqip(of: gradient(width: 64, height: 32, bands: 4)))
        #expect(lqip.hasAlpha)
        #expect(try lqip.pixel(x: 1, y: 4)[3] > 200)
        #expect(try lqip.pixel(x: 14, y: 4)[3] < 120)
    }

    /// The chunks of a RIFF WebP file, by FourCC, and the VP8X flags (0 without that chunk).
    private func webpChunks(_ data: Data) throws -> (chunks: [String], flags: UInt8) {
        let bytes = [UInt8](data)
        try #require(
            bytes.count >= 12 && String(decoding: bytes[0..<4], as: UTF8.self) == "RIFF"
                && String(decoding: bytes[8..<12], as: UTF8.self) == "WEBP")
        var chunks: [String] = []
        var flags: UInt8 = 0
        var offset = 12
        while offset + 8 <= bytes.count {
            let name = String(decoding: bytes[offset..<offset + 4], as: UTF8.self)
            let size = bytes[offset + 4..<offset + 8].reversed().reduce(0) { $0 << 8 | Int($1) }
            if name == "VP8X", offset + 8 < bytes.count { flags = bytes[offset + 8] }
            chunks.append(name)
            offset += 8 + size + size % 2
        }
        #expect(offset == bytes.count, "the chunks do not fill the file")
        return (chunks, flags)
    }

    /// A data URI is inlined in every page: no EXIF, XMP or ICC chunk, none announced by VP8X
    /// flags, and no EXIF bytes anywhere, whether the image came with EXIF or not (libvips makes
    /// EXIF of its own from the resolution and orientation when it saves).
    @Test func lqipCarriesNoMetadata() throws {
        // Given a JPEG with EXIF (an orientation, a resolution), as loaded, and an image made here
        let directory = try TemporaryDirectory()
        let file = try directory.write(try Fixtures.jpeg(try gradient(width: 300, height: 200).withOrientation(1)), to: "a.jpg")
        let loaded = try VipsImage.open(file: file)
        try #require(loaded.hasField("exif-data"))

        // When its LQIP is made, at the default and at a narrow image's own size
        for lqip in [try Placeholders.lqip(of: loaded), try Placeholders.lqip(of: gradient(width: 12, height: 8).withOrientation(6))] {
            let data = try #require(Data(base64Encoded: String(lqip.dropFirst("data:image/webp;base64,".count))))
            let (chunks, flags) = try webpChunks(data)

            // Then it is pixels alone
            #expect(!chunks.contains("EXIF") && !chunks.contains("XMP ") && !chunks.contains("ICCP"), "\(chunks)")
            #expect(flags & 0b0010_1100 == 0, "VP8X announces metadata: \(String(flags, radix: 2))")
            #expect(
                data.range(of: Data("Exif".utf8)) == nil && data.range(of: Data("MM\0*".utf8)) == nil
                    && data.range(of: Data("II*\0".utf8)) == nil)
            #expect(try decodedLQIP(lqip).hasField("exif-data") == false)
        }
    }

    // MARK: Dominant colour

    @Test func dominantColourOfARedImageWithABlueCornerIsRed() throws {
        // Given a red image with a blue corner (a ninth of it)
        let image = try Fixtures.image(width: 90, height: 60, bands: 3) { x, y in
            x < 30 && y < 20 ? [20, 40, 220] : [230, 30, 40]
        }

        // When its dominant colour is computed
        let colour = try Placeholders.dominantColor(of: image)

        // Then it is the centre of the red's 16-wide bins: 14·16+8, 1·16+8, 2·16+8
        #expect(colour == "#e81828")
    }

    @Test func dominantColourTiesGoToTheLowestGreenThenRedThenBlueBin() throws {
        // Given an image half pure red, half pure green: two bins of equal count
        let image = try Fixtures.image(width: 2, height: 1, bands: 3) { x, _ in x == 0 ? [0, 255, 0] : [255, 0, 0] }

        // When its dominant colour is computed, then the red (green bin 0) wins, as sharp's maxpos scan gives
        #expect(try Placeholders.dominantColor(of: image) == "#f80808")
    }

    @Test func dominantColourLeavesOutPixelsAllButTransparent() throws {
        // Given an image mostly transparent black, with an opaque green stripe and a
        // half-transparent red one
        let image = try Fixtures.image(width: 10, height: 10, bands: 4) { x, _ in
            x < 3 ? [0, 200, 0, 255] : x < 5 ? [200, 0, 0, 128] : [0, 0, 0, 0]
        }
        // When its dominant colour is computed, then it is the green, which sharp (counting
        // the transparent black) does not give
        #expect(try Placeholders.dominantColor(of: image) == "#08c808")
        // and a dark colour that is seen is still counted in the first bin
        let dark = try Fixtures.image(width: 10, height: 10, bands: 4) { x, _ in
            x < 4 ? [2, 2, 2, 255] : x < 7 ? [0, 200, 0, 255] : [250, 250, 250, 0]
        }
        #expect(try Placeholders.dominantColor(of: dark) == "#080808")
        // and pixels all but transparent, as a lossy alpha (AVIF's) leaves clear parts, do not count
        let noisy = try Fixtures.image(width: 10, height: 10, bands: 4) { x, y in
            x < 3 ? [0, 200, 0, 255] : [0, 0, 0, UInt8((x + y) % 5)]
        }
        #expect(try Placeholders.dominantColor(of: noisy) == "#08c808")
        // and an image wholly transparent counts every pixel, as sharp does
        let clear = try Fixtures.image(width: 4, height: 4, bands: 4) { _, _ in [250, 250, 250, 0] }
        #expect(try Placeholders.dominantColor(of: clear) == "#f8f8f8")
    }

    @Test func dominantColourOfGreyscaleIsGrey() throws {
        let image = try Fixtures.image(width: 8, height: 8, bands: 1) { _, _ in [100] }
        // 100 is in bin 6: 6·16+8 = 104 = 0x68.
        #expect(try Placeholders.dominantColor(of: image) == "#686868")
    }

    // MARK: Hashes of larger images

    @Test func blurhashOfALargeImageIsThatOfItsCopyFittedWithin64Pixels() throws {
        // Given a 640×480 image and its 64×48 copy made the way the placeholder makes it
        let image = try gradient(width: 640, height: 480)
        let small = try image.resized(horizontalScale: 0.1, verticalScale: 0.1, kernel: .lanczos3)
        try #require(small.width == 64 && small.height == 48)

        // When both are hashed, then the hashes are the same
        #expect(try Placeholders.blurhash(of: image) == Placeholders.blurhash(of: small))
        #expect(try Placeholders.blurhash(of: image).count == 28)
    }

    @Test func aThinImagesBlurhashShowsItsPicture() throws {
        // Given a strip 40 times wider than tall, red on the left and blue on the right
        let strip = try Fixtures.image(width: 1600, height: 40, bands: 3) { x, _ in x < 800 ? [255, 0, 0] : [0, 0, 255] }
        // When hashed
        let hash = Array(try Placeholders.blurhash(of: strip))
        // Then its first horizontal component (base83 digits 6 and 7: red, green and blue, each
        // 0…18 with 9 for none) has red falling and blue rising from left to right
        let digits = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz#$%*+,-.:;=?@[]^_{|}~")
        let value = hash[6..<8].reduce(0) { $0 * 83 + (digits.firstIndex(of: $1) ?? 0) }
        let (red, blue) = (value / (19 * 19), value % 19)
        #expect(red > 9 && blue < 9, "\(String(hash)): red \(red), blue \(blue)")
    }

    @Test func thumbhashOfALargeImageIsThatOfItsCopyFittedWithin100Pixels() throws {
        let image = try gradient(width: 400, height: 300)
        let small = try image.resized(horizontalScale: 0.25, verticalScale: 0.25, kernel: .lanczos3)
        try #require(small.width == 100 && small.height == 75)
        #expect(try Placeholders.thumbhash(of: image) == Placeholders.thumbhash(of: small))
    }

    @Test func greyscaleImagesHashAsTheirGreyInRGB() throws {
        // Given a greyscale image and the same greys in three bands
        let grey = try Fixtures.image(width: 20, height: 10, bands: 1) { x, y in [UInt8(x * 12 + y)] }
        let rgb = try Fixtures.image(width: 20, height: 10, bands: 3) { x, y in Array(repeating: UInt8(x * 12 + y), count: 3) }

        // When both are hashed, then the hashes agree
        #expect(try Placeholders.blurhash(of: grey) == Placeholders.blurhash(of: rgb))
        #expect(try Placeholders.thumbhash(of: grey) == Placeholders.thumbhash(of: rgb))
    }

    @Test func greyscaleWithAlphaKeepsItsAlpha() throws {
        let image = try Fixtures.image(width: 20, height: 10, bands: 2) { x, _ in [200, x < 10 ? 255 : 0] }
        let hash = try #require(Data(base64Encoded: Placeholders.thumbhash(of: image)))
        // Bit 23 of the header says the hash has alpha.
        #expect(hash[2] & 0x80 != 0)
    }

    // MARK: All at once

    @Test func computesTheRequestedKindsOnlyAndEncodesThemUnderTheirKeys() throws {
        // Given an image
        let image = try gradient(width: 120, height: 80)

        // When only the BlurHash and the dominant colour are asked for
        let placeholders = try Placeholders(of: image, kinds: [.blurhash, .dominantColor])

        // Then only those are computed, equal to the single functions, and JSON holds only their keys
        #expect(placeholders.lqip == nil && placeholders.thumbhash == nil)
        #expect(placeholders.blurhash == (try Placeholders.blurhash(of: image)))
        #expect(placeholders.dominantColor == (try Placeholders.dominantColor(of: image)))
        let json = try JSONSerialization.jsonObject(with: JSONEncoder().encode(placeholders)) as? [String: String]
        #expect(json.map { Set($0.keys) } == ["blurhash", "dominantColor"])
    }

    @Test func computesEveryKindByDefaultAndRoundTripsThroughJSON() throws {
        // Given an image with alpha
        let image = try gradient(width: 120, height: 80, bands: 4)

        // When every placeholder is computed
        let placeholders = try Placeholders(of: image)

        // Then each is there, under the kind's raw value, with `transparent` (half the image
        // is), and decodes back the same
        for kind in PlaceholderKind.allCases { #expect(placeholders[kind] != nil, "\(kind)") }
        let data = try JSONEncoder().encode(placeholders)
        let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(Set(json.keys) == Set(PlaceholderKind.allCases.map(\.rawValue) + ["transparent"]))
        #expect(json["thumbhash"] as? String == placeholders.thumbhash && json["transparent"] as? Bool == true)
        #expect(try JSONDecoder().decode(Placeholders.self, from: data) == placeholders)
    }

    @Test func transparentIsSetOnlyWhenSomePixelIsNotOpaque() throws {
        // Given an image without alpha, one with alpha opaque everywhere, and one with a single
        // pixel's alpha a step below opaque
        let opaque = try gradient(width: 40, height: 30)
        let opaqueAlpha = try Fixtures.image(width: 40, height: 30, bands: 4) { x, y in [UInt8(x), UInt8(y), 9, 255] }
        let onePixel = try Fixtures.image(width: 40, height: 30, bands: 4) { x, y in
            [UInt8(x), UInt8(y), 9, x == 39 && y == 29 ? 254 : 255]
        }
        // Then only the last is transparent, with any kind asked for
        for kind in PlaceholderKind.allCases {
            #expect(try Placeholders(of: opaque, kinds: [kind]).transparent == nil, "\(kind)")
            #expect(try Placeholders(of: opaqueAlpha, kinds: [kind]).transparent == nil, "\(kind)")
            #expect(try Placeholders(of: onePixel, kinds: [kind]).transparent == true, "\(kind)")
        }
        #expect(try Placeholders(of: onePixel, kinds: []).transparent == nil)
    }

    @Test func noKindsComputesNothing() throws {
        #expect(try Placeholders(of: gradient(width: 4, height: 4), kinds: []) == Placeholders())
    }

    // MARK: Errors

    @Test(arguments: [(0, 3), (10, 3), (4, 0), (4, 10)])
    func blurhashComponentsOutOfRangeAreErrorsNamingTheSetting(x: Int, y: Int) throws {
        let image = try gradient(width: 8, height: 8)
        let settings = PlaceholderSettings(blurhashXComponents: x, blurhashYComponents: y)
        let name = x == 4 ? "blurhashYComponents" : "blurhashXComponents"
        let expected = PlaceholderError(.blurhash, .settingOutOfRange(name: name, value: x == 4 ? y : x, allowed: 1...9))

        #expect(throws: expected) { try Placeholders(of: image, kinds: [.blurhash], settings: settings) }
        #expect(throws: expected) { try Placeholders.blurhash(of: image, xComponents: x, yComponents: y) }
        #expect(throws: expected) {
            try BlurHash.encode(pixels: [0, 0, 0], width: 1, height: 1, channels: 3, xComponents: x, yComponents: y)
        }
        #expect(expected.description.contains(name))
    }

    @Test func settingsAreCheckedBeforeAnyPixelIsRead() throws {
        let image = try gradient(width: 8, height: 8)
        let settings = PlaceholderSettings(lqipWidth: 0)
        #expect(throws: PlaceholderError(.lqip, .settingOutOfRange(name: "lqipWidth", value: 0, allowed: 1...64))) {
            try Placeholders(of: image, settings: settings)
        }
        #expect(throws: PlaceholderError(.lqip, .settingOutOfRange(name: "lqipQuality", value: 101, allowed: 1...100))) {
            try Placeholders.lqip(of: image, quality: 101)
        }
        // A setting of a kind not asked for does not matter.
        #expect(try Placeholders(of: image, kinds: [.thumbhash], settings: settings).thumbhash != nil)
    }

    @Test func encodersRejectPixelsThatDoNotFit() {
        #expect(throws: PlaceholderError.self) { try ThumbHash.encode(rgba: Array(repeating: 0, count: 101 * 4), width: 101, height: 1) }
        #expect(throws: PlaceholderError.self) { try ThumbHash.encode(rgba: [0, 0, 0], width: 1, height: 1) }
        #expect(throws: PlaceholderError.self) { try BlurHash.encode(pixels: [0, 0, 0, 0], width: 1, height: 1, channels: 3) }
        #expect(throws: PlaceholderError.self) { try BlurHash.encode(pixels: [0, 0], width: 1, height: 1, channels: 2) }
    }

    @Test func anImageThatIsNotColourIsAnErrorNamingThePlaceholder() throws {
        // Given a five-band image, which has no sRGB meaning
        let image = try VipsImage(pixels: Array(repeating: 7, count: 4 * 4 * 5), width: 4, height: 4, bands: 5)

        // When a placeholder is asked for, then the error names it
        let error = #expect(throws: PlaceholderError.self) { try Placeholders(of: image, kinds: [.thumbhash]) }
        #expect(error?.kind == .thumbhash)
        #expect(error?.description.hasPrefix("cannot compute the thumbhash placeholder: ") == true)
    }
}
