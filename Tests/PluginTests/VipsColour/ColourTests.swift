import Foundation
import PipelineKit
import TestSupport
import Testing
import Vips
import VipsColour

@Suite("Colour")
struct ColourTests {

    // MARK: Measuring colour, independently of libvips

    /// CIE L*a*b* (D65) of an 8-bit sRGB colour, by the textbook formulas.
    static func lab(_ rgb: [Double]) -> (l: Double, a: Double, b: Double) {
        func linear(_ value: Double) -> Double {
            let c = value / 255
            return c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4)
        }
        let (r, g, b) = (linear(rgb[0]), linear(rgb[1]), linear(rgb[2]))
        let x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047
        let y = 0.2126 * r + 0.7152 * g + 0.0722 * b
        let z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883
        func f(_ t: Double) -> Double { t > 216.0 / 24389 ? cbrt(t) : (24389.0 / 27 * t + 16) / 116 }
        return (116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z)))
    }

    /// The lightness L* of a grey level.
    static func lightness(ofGrey grey: Double) -> Double { lab([grey, grey, grey]).l }

    /// The hue angle of a colour in degrees, 0–360.
    static func hue(_ rgb: [Double]) -> Double {
        let (_, a, b) = lab(rgb)
        let degrees = atan2(b, a) * 180 / .pi
        return degrees < 0 ? degrees + 360 : degrees
    }

    /// The grey level whose luminance is that of `rgb`: Y encoded with the sRGB curve.
    static func luminanceGrey(_ rgb: [Double]) -> Double {
        func linear(_ value: Double) -> Double {
            let c = value / 255
            return c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4)
        }
        let y = 0.2126 * linear(rgb[0]) + 0.7152 * linear(rgb[1]) + 0.0722 * linear(rgb[2])
        return 255 * (y <= 0.0031308 ? 12.92 * y : 1.055 * pow(y, 1 / 2.4) - 0.055)
    }

    /// A 16×4 image of muted colours (L* about 20–50), the same every run.
    static func mutedColours() throws -> VipsImage {
        try Fixtures.image(width: 16, height: 4, bands: 3) { x, y in
            [UInt8(40 + x * 5), UInt8(30 + y * 20), UInt8(90 - x * 3)]
        }
    }

    static func mean(_ values: [Double]) -> Double { values.reduce(0, +) / Double(values.count) }

    static func pixels(_ image: VipsImage) throws -> [[Double]] {
        var result: [[Double]] = []
        for y in 0..<image.height {
            for x in 0..<image.width { result.append(try image.pixel(x: x, y: y)) }
        }
        return result
    }

    // MARK: options

    @Test func optionErrorsNameTheOption() {
        func option(_ body: () throws -> Void) -> String? {
            do { try body(); return "no error" } catch let error as OptionError { return error.option } catch { return "\(error)" }
        }
        #expect(option { _ = try Modulate(brightness: -1) } == "brightness")
        #expect(option { _ = try Modulate(saturation: 101) } == "saturation")
        #expect(option { _ = try Modulate(hue: 400) } == "hue")
        #expect(option { _ = try Modulate(lightness: -101) } == "lightness")
        #expect(option { _ = try Fixtures.processor(Tint.self, [:]) } == "color")
        #expect(option { _ = try Tint(color: [300, 0, 0]) } == "color")
        #expect(option { _ = try Flatten(background: [1, 2]) } == "background")
        #expect(option { _ = try Gamma(gamma: 0.05) } == "gamma")
        #expect(option { _ = try Gamma(gamma: 11) } == "gamma")
        #expect(option { _ = try Normalise(lower: 100) } == "lower")
        #expect(option { _ = try Fixtures.processor(Normalise.self, ["lower": 60, "upper": 40]) } == "upper")
    }

    @Test func aPipelineFileRejectsBadColourOptionsByName() {
        let json = PipelineHarness.json(
            inputs: ["in/*.png"],
            outputs: [
                #"{"name": "o", "steps": [{"modulate": {"brightnes": 2}}, {"gamma": {"gamma": 50}}, {"tint": {}}], "encode": {"format": "png"}, "path": "out/{stem}.png"}"#
            ])
        do {
            _ = try PipelineDefinition(json: json, baseDirectory: URL(fileURLWithPath: "/tmp"), processors: .standard)
            Issue.record("the file was accepted")
        } catch {
            let text = "\(error)"
            #expect(text.contains("brightnes") && text.contains("brightness"), "\(text)")
            #expect(text.contains("gamma"), "\(text)")
            #expect(text.contains("color"), "\(text)")
        }
    }

    @Test func identifiersDifferWhenSettingsDiffer() throws {
        #expect(try Modulate(brightness: 2).identifier != Modulate(saturation: 2).identifier)
        #expect(try Tint(color: [255, 0, 0]).identifier != Tint(color: [0, 0, 255]).identifier)
        #expect(try Flatten(background: [255, 255, 255]).identifier != Flatten().identifier)
        #expect(try Gamma(gamma: 2.2).identifier != Gamma(gamma: 1 / 2.2).identifier)
        #expect(Negate(alpha: true).identifier != Negate().identifier)
        #expect(try Normalise(lower: 2).identifier != Normalise().identifier)
        #expect(
            try Fixtures.processor(Flatten.self, ["background": "white"]).identifier == Flatten(background: [255, 255, 255]).identifier)
    }

    // MARK: end to end

    @Test func aPipelineFileRunsGreyscaleModulateAndNegate() async throws {
        // Given an orange PNG and an output that greys, darkens and inverts it, as JPEG
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.png(try Fixtures.solid(width: 32, height: 24, colour: [200, 100, 50])), to: "in/orange.png")
        let steps = #"[{"greyscale": {}}, {"modulate": {"brightness": 0.5}}, {"negate": {}}]"#
        let json = PipelineHarness.json(
            inputs: ["in/*.png"],
            outputs: [
                #"{"name": "neg", "steps": \#(steps), "encode": {"format": "jpeg", "quality": 95}, "path": "out/{stem}.jpg"}"#
            ])

        // When the pipeline runs
        let (_, summary) = try await PipelineHarness.run(json, in: directory)

        // Then the JPEG is one band of 255 − (the grey of half the orange's lightness)
        #expect(summary.succeeded == 1 && summary.failed == 0)
        let written = try Data(contentsOf: directory.url.appendingPathComponent("out/orange.jpg"))
        let image = try VipsImage.open(data: written)
        #expect(image.size == ImageSize(width: 32, height: 24) && image.bands == 1)
        let halfLightness = Self.lightness(ofGrey: Self.luminanceGrey([200, 100, 50])) / 2
        let darkGrey = (0...255).min {
            abs(Self.lightness(ofGrey: Double($0)) - halfLightness) < abs(Self.lightness(ofGrey: Double($1)) - halfLightness)
        }!
        let pixel = try image.pixel(x: 16, y: 12)
        #expect(abs(pixel[0] - (255 - Double(darkGrey))) <= 5, "\(pixel), expected about \(255 - darkGrey)")
    }
}
