import Foundation
import PipelineKit
import Testing
import Vips

/// BlurHash and ThumbHash against what the reference implementations give for the same pixels.
///
/// The expected values were printed by `Fixtures/Placeholders/reference_values.py`:
/// - BlurHash by `blurhash` 1.1.5 from PyPI (halcy's Python port of woltapp/blurhash, in doubles);
///   `blurhash-python` 1.2.2, which wraps woltapp's C encoder, gives the same strings for all.
/// - ThumbHash by `thumbhash-python` 1.0.1 from PyPI (a port of evanw/thumbhash's
///   `rgbaToThumbHash`) with Python's `round` replaced by JavaScript's `Math.round`, as the
///   reference is JavaScript; for these images both roundings give the same bytes.
@Suite("Placeholder reference values")
struct PlaceholderReferenceTests {
    typealias Image = PlaceholderReferenceImage

    struct BlurHashCase: Sendable, CustomTestStringConvertible {
        let image: Image
        let x: Int
        let y: Int
        let expected: String
        var testDescription: String { "\(image.name) \(x)×\(y)" }
    }

    static let blurHashCases: [BlurHashCase] = [
        .init(image: .gradient4x3, x: 4, y: 3, expected: "LsHL;cCTFO?H:KNPN|w6dPeafSeZ"),
        .init(image: .gradient4x3, x: 1, y: 1, expected: "00HL;c"),
        .init(
            image: .gradient4x3, x: 9, y: 9,
            expected:
                "|~HL;cGbJq-pFN-pJqGb~q+SRrSPrxN{rxSPRr+Sd#eZfSeZfSeZfSeZd#.PTJSPtQN{tQSPTJ.Pd#eZfSeZfSeZfSeZd#+SRrSPrxN{rxSPRr+S~qGbJq-pFN-pJqGb~q+SRrSPrxN{rxSPRr+Sd#eZfSeZfSeZfSeZd#"
        ),
        .init(image: .gradient4x3, x: 5, y: 2, expected: "DoHL;cCmA{^*6n:LNPN|w6Jp"),
        .init(image: .gradient32x24, x: 4, y: 3, expected: "LxH27@2xw#X9mMWZjuf9gMfkfQfk"),
        .init(image: .gradient32x24, x: 1, y: 1, expected: "00H27@"),
        .init(
            image: .gradient32x24, x: 9, y: 9,
            expected:
                "|xH27@2xw#X9a~ogWrogWrmMWZjuf9fRf8fRf8fRgMfkfQfkfQfkfQfkfQn-WrjufRfRfRfRfRfRe?fRfQfRfQfQfQfQfQogWrjufRfRfRfQfRfQe?fRfQfQfQfQfQfQfQogWrjufRfRfRfQfRfQesfRfQfQfQfQfQfQfQ"
        ),
        .init(image: .gradient32x24, x: 5, y: 2, expected: "DxH27@2xw#X9a~mMWZjuf9fR"),
        .init(image: .twoColours20x10, x: 4, y: 3, expected: "L~H1Kk{H+rXBs=r=n$bHfQfQfQfQ"),
        .init(image: .twoColours20x10, x: 1, y: 1, expected: "00H1Kk"),
        .init(
            image: .twoColours20x10, x: 9, y: 9,
            expected:
                "|~H1Kk{H+rXBOZf-wHwcn#s=r=n$bHbHfkjZjsjsfQfQfQfQfQfQfQfQfQs=r=n$bHbHfkjZjsjsfQfQfQfQfQfQfQfQfQs=r=n$bHbHfkjZjsjsfQfQfQfQfQfQfQfQfQs=r=n$bHbHfkjZjsjsfQfQfQfQfQfQfQfQfQ"
        ),
        .init(image: .twoColours20x10, x: 5, y: 2, expected: "D~H1Kk{H+rXBOZs=r=n$bHbH"),
        .init(image: .portrait12x30, x: 4, y: 3, expected: "LpG8+jQdKLbvSpR%W:a^SQWqjtju"),
        .init(image: .portrait12x30, x: 1, y: 1, expected: "00G8+j"),
        .init(
            image: .portrait12x30, x: 9, y: 9,
            expected:
                "|pG8+jQdKLbvNJo|RTgMVwSpR%W:a^azbDjaj;n*SQWqjtjusUsVo1o2a|SwafoKjsjabFjaj?jaSLfQo1o1o1jtWpSMSMS#jIoKjuazSgjaoLn*SKjso1fPWpa{fQa{o1kCnlj@fRS3W;sBoLWWSKjso1Woa|o0a|fPfQ"
        ),
        .init(image: .portrait12x30, x: 5, y: 2, expected: "DpG8+jQdKLbvNJSpR%W:a^az"),
        .init(image: .alpha24x16, x: 4, y: 3, expected: "LoF[L}39wxb[tEW-jtfhfUfRfQfR"),
        .init(image: .alpha24x16, x: 1, y: 1, expected: "00F[L}"),
        .init(
            image: .alpha24x16, x: 9, y: 9,
            expected:
                "|oF[L}39wxb[Wpo{SMtPSMtEW-jtfhfQj=a|j=a|fUfRfQfRfQfRfQfRfQtPW:jtfjfQj@a|j@a|fNfPfQfPfQfPfQfPfQtQW;jtfkfQj[a|j[a|fNfPfQfPfQfPfQfPfQtQW;jtfkfQj[a|j[a|fMfPfQfPfQfPfQfPfQ"
        ),
        .init(image: .alpha24x16, x: 5, y: 2, expected: "DoF[L}39wxb[WptEW-jtfhfQ"),
    ]

    static let thumbHashCases: [(Image, String)] = [
        (.gradient4x3, "XwgKdZx1d3iAiHiHh4iIh3ByF/eI"),
        (.gradient32x24, "IBcGbZpxd4dweIiIiHiHh4BxB/eI"),
        (.twoColours20x10, "nxUKjLBQmWiHiIiIeHivh/iKiA=="),
        (.portrait12x30, "3AcKWxJgcXeHdod2Yn/3ZWc="),
        (.alpha24x16, "oziJQ5ArYHdwh3l2rwZmiX91smh3eIg="),
    ]

    @Test(arguments: blurHashCases)
    func blurHashOfPixelsMatchesTheReference(_ test: BlurHashCase) throws {
        // Given the pixels as RGB and as RGBA (the reference encoders ignore alpha)
        let image = test.image

        // When they are encoded
        let fromRGB = try BlurHash.encode(
            pixels: image.rgb, width: image.width, height: image.height, channels: 3, xComponents: test.x, yComponents: test.y)
        let fromRGBA = try BlurHash.encode(
            pixels: image.rgba, width: image.width, height: image.height, channels: 4, xComponents: test.x, yComponents: test.y)

        // Then both give the reference's string
        #expect(fromRGB == test.expected)
        #expect(fromRGBA == test.expected)
    }

    @Test(arguments: blurHashCases)
    func blurHashOfAVipsImageSmallerThanTheBlurHashSideMatchesTheReference(_ test: BlurHashCase) throws {
        // Given a libvips image no larger than the side BlurHash is computed at, so nothing is resized
        let image = try test.image.vipsImage()
        try #require(max(image.width, image.height) <= Placeholders.blurhashSide)

        // When its BlurHash is computed
        let hash = try Placeholders.blurhash(of: image, xComponents: test.x, yComponents: test.y)

        // Then it is the reference's
        #expect(hash == test.expected)
    }

    @Test(arguments: thumbHashCases)
    func thumbHashOfPixelsMatchesTheReference(_ image: Image, _ expected: String) throws {
        let hash = try ThumbHash.encode(rgba: image.rgba, width: image.width, height: image.height)
        #expect(Data(hash).base64EncodedString() == expected)
    }

    @Test(arguments: thumbHashCases)
    func thumbHashOfAVipsImageWithin100PixelsMatchesTheReference(_ image: Image, _ expected: String) throws {
        // Given a libvips image (RGB when opaque, RGBA otherwise) within 100×100, so nothing is resized
        let vipsImage = try image.vipsImage()

        // When its ThumbHash is computed, then it is the reference's, in base64
        #expect(try Placeholders.thumbhash(of: vipsImage) == expected)
    }

    @Test func referenceImagesCoverOpaqueAndTransparentPixels() {
        #expect(Image.gradient32x24.isOpaque)
        #expect(!Image.alpha24x16.isOpaque)
    }
}
