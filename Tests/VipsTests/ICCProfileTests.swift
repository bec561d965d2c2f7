import Foundation
import TestSupport
import Testing
import Vips

extension OneAtATime {
    /// Telling an embedded sRGB profile, which needs no conversion, from any other.
    @Suite("ICC profiles")
    struct ICCProfileTests {
        static func embedded(_ profile: String) throws -> [UInt8] {
            let image = try Fixtures.image(width: 4, height: 4, bands: 3) { x, y in [UInt8(x * 60), UInt8(y * 60), 90] }
            return try #require(try image.convertedFromSRGB(toProfile: profile).iccProfileBytes)
        }

        @Test func libvipsOwnSRGBProfileIsSRGB() throws {
            #expect(ICCProfile.isSRGB(try Self.embedded("srgb")))
        }

        @Test func displayP3AndCMYKAreNot() throws {
            #expect(!ICCProfile.isSRGB(try Self.embedded("p3")))
            let cmyk = try Fixtures.image(width: 4, height: 4, bands: 3) { _, _ in [10, 20, 30] }.convertedFromSRGB(toProfile: "cmyk")
            #expect(!ICCProfile.isSRGB(try #require(cmyk.iccProfileBytes)))
        }

        @Test func sRGBPrimariesWithSRGBsCurveInAnyFormAreSRGB() {
            #expect(ICCProfile.isSRGB(ICCFixtures.profile(primaries: ICCFixtures.srgbPrimaries, curve: ICCFixtures.srgbParametric)))
            // A 1024-entry table, as the classic HP profile has.
            #expect(ICCProfile.isSRGB(ICCFixtures.profile(primaries: ICCFixtures.srgbPrimaries, curve: ICCFixtures.srgbTable)))
        }

        @Test func anotherCurveOrOtherPrimariesAreNotSRGB() {
            // Gamma 2.2 (0x0233 in 8.8 fixed point) is close to sRGB's curve, not the same.
            #expect(!ICCProfile.isSRGB(ICCFixtures.profile(primaries: ICCFixtures.srgbPrimaries, curve: ICCFixtures.gammaCurve(2.2))))
            // Linear light.
            #expect(
                !ICCProfile.isSRGB(
                    ICCFixtures.profile(primaries: ICCFixtures.srgbPrimaries, curve: Array("curv".utf8) + [0, 0, 0, 0, 0, 0, 0, 0])))
            // Adobe RGB's primaries.
            #expect(!ICCProfile.isSRGB(ICCFixtures.profile(primaries: ICCFixtures.adobePrimaries, curve: ICCFixtures.srgbParametric)))
        }

        @Test func damagedBytesAreNotSRGB() throws {
            let srgb = try Self.embedded("srgb")
            #expect(!ICCProfile.isSRGB([]))
            #expect(!ICCProfile.isSRGB(Array(srgb.prefix(140))))
            var badSignature = srgb
            badSignature[36] = 0
            #expect(!ICCProfile.isSRGB(badSignature))
            // A tag table that points past the end.
            var pastTheEnd = ICCFixtures.profile(primaries: ICCFixtures.srgbPrimaries, curve: ICCFixtures.srgbParametric)
            pastTheEnd[132 + 12 + 4] = 0xFF
            #expect(!ICCProfile.isSRGB(pastTheEnd))
            // Every truncation of a good profile is refused or read safely.
            let good = ICCFixtures.profile(primaries: ICCFixtures.srgbPrimaries, curve: ICCFixtures.srgbParametric)
            for length in 0..<good.count { _ = ICCProfile.isSRGB(Array(good.prefix(length))) }
        }

        @Test func aProfileWithBytesPastItsTagsOrAnotherLengthIsNotPlain() throws {
            let srgb = try Self.embedded("srgb")
            #expect(ICCProfile.isPlain(srgb))
            #expect(ICCProfile.isPlain(ICCFixtures.profile(primaries: ICCFixtures.srgbPrimaries, curve: ICCFixtures.srgbTable)))
            // Padded, its header counting the padding: bytes no reader reads
            let padded = ICCFixtures.padded(srgb, by: 4096)
            #expect(ICCProfile.isSRGB(padded) && !ICCProfile.isPlain(padded))
            // A length its header does not give
            var mislabelled = srgb
            mislabelled.replaceSubrange(0..<4, with: [0x7F, 0xFF, 0xFF, 0xFF])
            #expect(ICCProfile.isSRGB(mislabelled) && !ICCProfile.isPlain(mislabelled))
            // Bytes between its tag table and its tags, which no tag holds
            func be32(_ value: Int) -> [UInt8] { [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: value >> $0) } }
            var gapped = ICCFixtures.profile(primaries: ICCFixtures.srgbPrimaries, curve: ICCFixtures.srgbTable)
            let count = try #require(gapped.storedInteger(at: 128))
            gapped.insert(contentsOf: [UInt8](repeating: 9, count: 64), at: 132 + count * 12)
            for entry in 0..<count {
                let at = 132 + entry * 12 + 4
                gapped.replaceSubrange(at..<at + 4, with: be32(try #require(gapped.storedInteger(at: at)) + 64))
            }
            gapped.replaceSubrange(0..<4, with: be32(gapped.count))
            #expect(ICCProfile.isSRGB(gapped) && !ICCProfile.isPlain(gapped))
            // Too large to be kept, whatever it holds
            #expect(!ICCProfile.isPlain(ICCFixtures.padded(srgb, by: ICCProfile.plainMaximum)))
        }
    }
}
