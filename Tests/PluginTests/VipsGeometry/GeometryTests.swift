import Foundation
import PipelineKit
import TestSupport
import Testing
import Vips
import VipsGeometry

/// What the geometry suites build their steps and images with.
protocol GeometrySamples {}

extension GeometrySamples {
    func processor<Processor: ImageProcessing>(_ type: Processor.Type, _ values: [String: any Sendable] = [:]) throws -> Processor {
        try Fixtures.processor(type, values)
    }

    /// A `width`×`height` image whose red is 10x + 5 and green 10y + 5, so a pixel says where it came from.
    func coordinates(width: Int = 5, height: Int = 3) throws -> VipsImage {
        try Fixtures.image(width: width, height: height, bands: 3) { x, y in [UInt8(10 * x + 5), UInt8(10 * y + 5), 100] }
    }

    func origin(_ x: Int, _ y: Int) -> [Double] {
        [Double(10 * x + 5), Double(10 * y + 5), 100]
    }
}

/// Every geometry step together: planned sizes, and a pipeline file through them.
@Suite("Geometry")
struct GeometryTests: GeometrySamples {
    // MARK: Every step

    @Test func everyStepsPlannedSizeIsTheSizeItMakes() throws {
        // Given a 37×23 image with detail
        let image = try Fixtures.flatWithDetail(width: 37, height: 23, detailed: 10..<20)

        // When each step runs
        let steps: [any ImageProcessing] = try [
            Flip(), Flop(),
            Rotate(angle: 90), Rotate(angle: 180), Rotate(angle: -90), Rotate(angle: 30), Rotate(angle: 200.5),
            Extend(top: 1, right: 2, bottom: 3, left: 4), Extend(left: 7, extendWith: .mirror),
            Trim(background: [0, 0, 0], threshold: 0),
        ]
        for step in steps {
            // Then outputSize(for:) gave the real size
            #expect(try step.applied(to: image).size == step.outputSize(for: image.size), "\(step.identifier)")
        }
    }

    // MARK: Through a pipeline file

    @Test func aPipelineFileRotatesFlopsExtendsAndSharpens() async throws {
        // Given a 40×20 PNG whose top-left quadrant is red and the rest blue
        let directory = try TemporaryDirectory()
        let corner = try Fixtures.image(width: 40, height: 20, bands: 3) { x, y in x < 20 && y < 10 ? Fixtures.red : Fixtures.blue }
        try directory.write(try corner.encoded(suffix: ".png"), to: "in/corner.png")
        let steps = """
            [{"rotate": {"angle": 90}}, {"flop": {}}, \
            {"extend": {"top": 2, "left": 3, "background": "#00ff00"}}, {"sharpen": {}}]
            """
        let json = PipelineHarness.json(
            inputs: ["in/*.png"],
            outputs: [
                #"{"name": "turned", "steps": \#(steps), "encode": {"format": "png"}, "path": "out/{stem}.png"}"#
            ])

        // When the pipeline runs
        let (reports, summary) = try await PipelineHarness.run(json, in: directory)

        // Then the output is 20×40 turned, plus the border: 23×42
        #expect(summary.succeeded == 1 && summary.failed == 0)
        #expect(reports.first?.written.map(\.size) == [ImageSize(width: 23, height: 42)])
        let written = try VipsImage.open(file: directory.url.appendingPathComponent("out/corner.png").path)
        #expect(written.size == ImageSize(width: 23, height: 42))
        // and the red quadrant, turned clockwise to the top right and mirrored to the top left,
        // sits inside the green border; the rest is blue
        #expect(try written.pixel(x: 0, y: 0) == [0, 255, 0])
        #expect(try written.pixel(x: 22, y: 1) == [0, 255, 0])
        #expect(try written.pixel(x: 7, y: 10) == [255, 0, 0])
        #expect(try written.pixel(x: 18, y: 10) == [0, 0, 255])
        #expect(try written.pixel(x: 7, y: 32) == [0, 0, 255])
    }
}
