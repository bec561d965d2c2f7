import Foundation
import PipelineKit
import TestSupport
import Testing
import Vips
import VipsGeometry

/// The rotate step: exact at multiples of 90°, the background in the corners otherwise.
@Suite("Rotate")
struct RotateTests: GeometrySamples {
    @Test(arguments: [
        (0.0, 0), (90, 90), (180, 180), (270, 270), (360, 0),
        (-90, 270), (-180, 180), (-270, 90), (450, 90), (-720, 0),
    ])
    func rotationByAMultipleOf90IsExact(_ angle: Double, _ clockwise: Int) throws {
        // Given a 5×3 image whose pixels know their coordinates
        let image = try coordinates()
        let (width, height) = (5, 3)

        // When it is rotated
        let rotate = try processor(Rotate.self, ["angle": angle])
        let result = try rotate.applied(to: image)

        // Then every pixel lands where a clockwise turn puts it, unchanged
        #expect(rotate.angle == Double(clockwise))
        #expect(result.size == rotate.outputSize(for: image.size))
        #expect(result.size == (clockwise % 180 == 0 ? image.size : ImageSize(width: height, height: width)))
        for y in 0..<height {
            for x in 0..<width {
                let (u, v) =
                    switch clockwise {
                    case 90: (height - 1 - y, x)
                    case 180: (width - 1 - x, height - 1 - y)
                    case 270: (y, width - 1 - x)
                    default: (x, y)
                    }
                #expect(try result.pixel(x: u, y: v) == origin(x, y), "(\(x), \(y)) at \(angle)°")
            }
        }
    }

    @Test func rotationBy45GrowsTheCanvasAndFillsTheCornersWithTheBackground() throws {
        // Given a 20×20 red square
        let image = try Fixtures.solid(width: 20, height: 20, colour: Fixtures.red)

        // When it is rotated by 45° onto blue
        let rotate = try processor(Rotate.self, ["angle": 45, "background": "#0000ff"])
        let result = try rotate.applied(to: image)

        // Then the canvas holds the whole diamond (20√2 ≈ 28), its corners are blue and its middle red
        #expect(result.size == ImageSize(width: 28, height: 28))
        #expect(rotate.outputSize(for: image.size) == result.size)
        #expect(result.bands == 3)
        for (x, y) in [(0, 0), (27, 0), (0, 27), (27, 27), (2, 2)] {
            #expect(try result.pixel(x: x, y: y) == [0, 0, 255], "(\(x), \(y))")
        }
        #expect(try result.pixel(x: 14, y: 14) == [255, 0, 0])
        #expect(try result.pixel(x: 14, y: 2) == [255, 0, 0])
    }

    @Test func rotationTurnsClockwise() throws {
        // Given a 60×10 bar, red on the left half and blue on the right
        let image = try Fixtures.redLeftBlueRight(width: 60, height: 10)

        // When it is rotated by 30°
        let result = try processor(Rotate.self, ["angle": 30, "background": "#00ff00"]).applied(to: image)

        // Then the blue end has turned down, not up: 25 px right of the centre, turned 30°
        // clockwise, is 21.7 px right and 12.5 px down
        let centre = (x: Double(result.width) / 2, y: Double(result.height) / 2)
        let down = try result.pixel(x: Int(centre.x + 21.7), y: Int(centre.y + 12.5))
        let up = try result.pixel(x: Int(centre.x + 21.7), y: Int(centre.y - 12.5))
        #expect(down == [0, 0, 255])
        #expect(up == [0, 255, 0])
    }

    @Test func translucentRotationBackgroundAddsAnAlphaBand() throws {
        // Given an opaque RGB square
        let image = try Fixtures.solid(width: 20, height: 20, colour: Fixtures.red)

        // When it is rotated by 45° onto a transparent background
        let result = try processor(Rotate.self, ["angle": 45, "background": "#00000000"]).applied(to: image)

        // Then it has alpha: transparent corners, an opaque red middle
        #expect(result.bands == 4)
        #expect(try result.pixel(x: 0, y: 0)[3] == 0)
        #expect(try result.pixel(x: 14, y: 14) == [255, 0, 0, 255])
    }

    @Test func rotationOntoTransparencyKeepsTheColourOfEdgePixels() throws {
        // Given an opaque grey square
        let image = try Fixtures.solid(width: 30, height: 30, colour: [60, 60, 60])

        // When it is rotated by 10° onto a transparent background
        let result = try processor(Rotate.self, ["angle": 10, "background": "#00000000"]).applied(to: image)

        // Then every pixel that shows, the part-covered edges too, is the square's grey
        var edgePixels = 0
        for y in 0..<result.height {
            for x in 0..<result.width {
                let pixel = try result.pixel(x: x, y: y)
                guard pixel[3] > 0 else { continue }
                if pixel[3] < 255 { edgePixels += 1 }
                #expect(pixel[0...2].allSatisfy { abs($0 - 60) <= 1 }, "\(pixel) at \(x),\(y)")
            }
        }
        #expect(edgePixels > 0)
    }

    @Test func aTranslucentBackgroundKeepsItsColour() throws {
        // Given a translucent square, rotated onto a translucent blue
        let image = try Fixtures.solid(width: 30, height: 30, colour: [60, 60, 60, 128])
        let result = try processor(Rotate.self, ["angle": 30, "background": "#0000c880"]).applied(to: image)
        // Then the corners are that blue, and the middle the square's grey
        let corner = try result.pixel(x: 0, y: 0)
        #expect(corner[2] >= 199 && corner[2] <= 201 && corner[3] == 128, "\(corner)")
        let middle = try result.pixel(x: result.width / 2, y: result.height / 2)
        #expect(middle.prefix(3).allSatisfy { abs($0 - 60) <= 1 } && middle[3] == 128, "\(middle)")
    }

    @Test(arguments: [1.0, 17.5, 30, 45, 60, 89.9, 91, 135, 180.5, 271, 333, -10])
    func rotatedSizeMatchesLibvipsForAnyAngle(_ angle: Double) throws {
        let rotate = try Rotate(angle: angle)
        for (width, height) in [(1, 1), (2, 3), (37, 23), (100, 7), (640, 480)] {
            let image = try Fixtures.solid(width: width, height: height, colour: Fixtures.grey)
            #expect(try rotate.applied(to: image).size == rotate.outputSize(for: image.size), "\(width)×\(height) at \(angle)°")
        }
    }

    @Test func rotationIdentifiersIgnoreTheBackgroundOnlyWhenItCannotShow() throws {
        #expect(try Rotate(angle: -90).identifier == Rotate(angle: 270).identifier)
        #expect(try Rotate(angle: 450).identifier == Rotate(angle: 90, background: [255, 0, 0]).identifier)
        #expect(try Rotate(angle: 45).identifier != Rotate(angle: 45, background: [255, 0, 0]).identifier)
        #expect(try Rotate(angle: 45).identifier != Rotate(angle: 46).identifier)
    }

    @Test func rotateNeedsAnAngle() {
        let error = #expect(throws: OptionError.self) { try processor(Rotate.self) }
        #expect(error?.option == "angle")
        let badColour = #expect(throws: OptionError.self) { try Rotate(angle: 10, background: [0, 0]) }
        #expect(badColour?.option == "background")
    }
}
