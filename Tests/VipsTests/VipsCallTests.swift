import TestSupport
import Testing
import Vips

extension OneAtATime {
    @Suite("Any libvips operation by name")
    struct VipsCallTests {

        @Test func flipByNameMirrorsTheImage() throws {
            // Given red on the left, blue on the right
            let image = try Fixtures.redLeftBlueRight(width: 10, height: 4)

            // When flipped horizontally through the generic call
            let flipped = try image.applying("flip", ["direction": .string("horizontal")])

            // Then the left column is the original's right column
            #expect(flipped.size == image.size)
            #expect(try flipped.pixel(x: 0, y: 0) == (try image.pixel(x: 9, y: 0)))
            #expect(try flipped.pixel(x: 9, y: 0) == (try image.pixel(x: 0, y: 0)))
            // and an enum given by its value (VIPS_DIRECTION_HORIZONTAL is 0) flips alike
            let byValue = try image.applying("flip", ["direction": .integer(0)])
            #expect(try byValue.pixel(x: 0, y: 0) == (try image.pixel(x: 9, y: 0)))
            let noSuchValue = #expect(throws: VipsError.self) { try image.applying("flip", ["direction": .integer(7)]) }
            #expect(noSuchValue?.message.contains("horizontal") == true)
        }

        @Test func numbersAndArraysAndOutputsOtherThanImages() throws {
            // A blur with a double argument, then the average as a number output
            let image = try Fixtures.solid(width: 8, height: 8, colour: [100, 150, 200])
            let blurred = try image.applying("gaussblur", ["sigma": .number(1.5), "min_ampl": .number(0.2)])
            #expect(blurred.size == image.size)
            let mean = try Vips.call("avg", ["in": .image(image)])["out"]?.number
            #expect(mean == 150)
            // An array argument: linear with per-band factors
            let scaled = try image.applying("linear", ["a": .numbers([1, 1, 0.5]), "b": .numbers([0, 0, 0])])
            #expect(try scaled.pixel(x: 0, y: 0) == [100, 150, 100])
        }

        @Test func mistakesAreErrorsThatNameTheArgument() throws {
            let image = try Fixtures.solid(width: 4, height: 4, colour: [1, 2, 3])
            #expect(throws: VipsError.self) { try image.applying("no_such_operation") }
            let unknown = #expect(throws: VipsError.self) { try image.applying("flip", ["dir": .string("horizontal")]) }
            #expect(unknown?.message.contains("\"dir\"") == true)
            let missing = #expect(throws: VipsError.self) { try image.applying("flip") }
            #expect(missing?.message.contains("\"direction\"") == true)
            let badEnum = #expect(throws: VipsError.self) { try image.applying("flip", ["direction": .string("sideways")]) }
            #expect(badEnum?.message.contains("horizontal") == true)
            let outOfRange = #expect(throws: VipsError.self) { try image.applying("gaussblur", ["sigma": .number(-1)]) }
            #expect(outOfRange?.message.contains("sigma") == true)
            let wrongType = #expect(throws: VipsError.self) { try image.applying("gaussblur", ["sigma": .string("big")]) }
            #expect(wrongType?.message.contains("number") == true)
        }

        @Test func introspectionDescribesArguments() throws {
            let info = try #require(VipsOperationInfo.named("flip"))
            let direction = try #require(info.argument(named: "direction"))
            #expect(direction.isRequired && direction.isInput)
            guard case .enumeration(let names, _) = direction.kind else { Issue.record("direction is \(direction.kind)"); return }
            #expect(names.contains("horizontal") && names.contains("vertical"))
            #expect(VipsOperationInfo.named("jpegload")?.isForeign == true)
            #expect(VipsOperationInfo.allNames.contains("embed"))
            #expect(VipsOperationInfo.named("VipsForeign") == nil)
        }

        @Test func aDeprecatedArgumentFlaggedRequiredNeedNotBeGiven() throws {
            // libvips 8.14's shrinkh still lists its old "xshrink" as required, beside "hshrink".
            let image = try Fixtures.solid(width: 64, height: 8)
            let shrunk = try image.applying("shrinkh", ["hshrink": .integer(4)])
            #expect(shrunk.width == 16 && shrunk.height == 8)
            #expect(VipsOperationInfo.named("shrinkh")?.inputs.filter(\.isRequired).map(\.name) == ["in", "hshrink"])
        }
    }
}
