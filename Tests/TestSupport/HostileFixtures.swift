import Foundation
import Vips

/// Broken, hostile and unusual image files, made from real libvips output and then damaged or
/// patched byte by byte, so every fixture is built by the test that needs it.
package enum HostileFixtures {
    // MARK: Formats

    /// The encoders libvips has here, by extension, with the options the fixtures use.
    package static let suffixes: [String: String] = [
        "jpg": ".jpg[Q=90]", "png": ".png", "webp": ".webp[Q=80]", "gif": ".gif",
        "tif": ".tif", "avif": ".avif[Q=60,effort=0]", "heic": ".heic[Q=60,compression=hevc,effort=0]",
        "jxl": ".jxl[Q=80,effort=3]", "jp2": ".jp2[Q=80]",
    ]

    /// A small photo-like image, encoded as `ext`.
    package static func photo(_ ext: String, width: Int = 48, height: Int = 32) throws -> Data {
        try Fixtures.gradient(width: width, height: height).encoded(suffix: suffixes[ext] ?? ".\(ext)")
    }

    /// An image of `frames` frames, `width`×`height` each, frame `i` filled with `colour(i)`,
    /// as one tall image with a page height (how libvips holds animations and page stacks).
    package static func frames(_ frames: Int, width: Int, height: Int, colour: (Int) -> [UInt8]) throws -> VipsImage {
        var pixels: [UInt8] = []
        pixels.reserveCapacity(frames * width * height * 3)
        for frame in 0..<frames {
            let value = colour(frame)
            for _ in 0..<(width * height) { pixels += value }
        }
        return try VipsImage(pixels: pixels, width: width, height: height * frames, bands: 3).withPageHeight(height)
    }

    /// Red, green and blue frames of 40×30: a decoder that shows the first frame shows red.
    package static func animation(_ ext: String) throws -> Data {
        let palette: [[UInt8]] = [[255, 0, 0], [0, 255, 0], [0, 0, 255]]
        return try frames(3, width: 40, height: 30) { palette[$0] }.encoded(suffix: suffixes[ext] ?? ".\(ext)")
    }

    // MARK: Damage

    /// The first `fraction` of the bytes.
    package static func truncated(_ data: Data, to fraction: Double = 0.5) -> Data {
        data.prefix(Int(Double(data.count) * fraction))
    }

    /// The bytes with `count` bytes from `fraction` of the way in inverted.
    package static func corrupted(_ data: Data, at fraction: Double = 0.5, count: Int = 24) -> Data {
        var bytes = [UInt8](data)
        let start = Int(Double(bytes.count) * fraction)
        for index in start..<min(bytes.count, start + count) { bytes[index] ^= 0xff }
        return Data(bytes)
    }

    /// A GIF whose first frame asks for an LZW code size beyond the format's 12 bits.
    package static func gifWithBadLZWCodeSize() throws -> Data {
        var bytes = [UInt8](try photo("gif"))
        var position = 13
        if bytes[10] & 0x80 != 0 { position += 3 << ((Int(bytes[10]) & 7) + 1) }
        // Skip extension blocks (0x21, label, sub-blocks ended by a zero length).
        while position < bytes.count, bytes[position] == 0x21 {
            position += 2
            while position < bytes.count, bytes[position] != 0 { position += Int(bytes[position]) + 1 }
            position += 1
        }
        guard position + 10 < bytes.count, bytes[position] == 0x2C else { throw FixtureError.notFound("GIF image descriptor") }
        let flags = bytes[position + 9]
        let codeSize = position + 10 + (flags & 0x80 != 0 ? 3 << ((Int(flags) & 7) + 1) : 0)
        bytes[codeSize] = 15
        return Data(bytes)
    }

    /// Deterministic noise bytes.
    package static func randomBytes(_ count: Int, seed: UInt64) -> Data {
        var generator = SeededGenerator(seed: seed)
        return Data((0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }

    // MARK: Header bombs: small files whose header declares a huge image

    /// A valid 16×16 PNG whose header (with a correct checksum) declares `width`×`height`.
    package static func pngDeclaring(width: Int, height: Int) throws -> Data {
        var bytes = [UInt8](try Fixtures.png(try Fixtures.solid(width: 16, height: 16)))
        // Signature (8), IHDR length (4), "IHDR" (4), then width and height, big-endian.
        bytes.replaceSubrange(16..<24, with: bigEndian32(width) + bigEndian32(height))
        bytes.replaceSubrange(29..<33, with: bigEndian32(Int(crc32(bytes[12..<29]))))
        return Data(bytes)
    }

    /// A valid 16×16 PNG with a `type` chunk before its pixels that declares `length` bytes,
    /// of which only a few follow: libpng sets the declared length aside before finding it
    /// missing (libpng's own crasher files `huge_*_chunk.png` are made so).
    package static func pngWithChunkPastTheEnd(type: String, length: Int) throws -> Data {
        let bytes = [UInt8](try Fixtures.png(try Fixtures.solid(width: 16, height: 16)))
        // Signature (8) and IHDR (25), then the chunk: its length, its type and a few bytes.
        var chunk = Array(bytes[..<33])
        chunk += bigEndian32(length)
        chunk += Array(type.utf8)
        chunk += [UInt8](repeating: 0x41, count: 16)
        return Data(chunk)
    }

    /// A valid 16×16 baseline JPEG whose frame header declares `width`×`height` (at most 65535).
    package static func jpegDeclaring(width: Int, height: Int) throws -> Data {
        var bytes = [UInt8](try Fixtures.jpeg(try Fixtures.solid(width: 16, height: 16)))
        guard let sof = (0..<bytes.count - 9).first(where: { bytes[$0] == 0xFF && bytes[$0 + 1] == 0xC0 }) else {
            throw FixtureError.notFound("JPEG frame header")
        }
        // FFC0, length (2), precision (1), then height and width, big-endian.
        bytes.replaceSubrange(sof + 5..<sof + 9, with: bigEndian16(height) + bigEndian16(width))
        return Data(bytes)
    }

    /// A valid 16×16 GIF whose screen and first frame declare `width`×`height` (at most 65535).
    package static func gifDeclaring(width: Int, height: Int) throws -> Data {
        var bytes = [UInt8](try Fixtures.solid(width: 16, height: 16).encoded(suffix: ".gif"))
        bytes.replaceSubrange(6..<10, with: littleEndian16(width) + littleEndian16(height))
        guard let descriptor = (13..<bytes.count - 9).first(where: { bytes[$0] == 0x2C }) else {
            throw FixtureError.notFound("GIF image descriptor")
        }
        bytes.replaceSubrange(descriptor + 5..<descriptor + 9, with: littleEndian16(width) + littleEndian16(height))
        return Data(bytes)
    }

    /// A hand-made greyscale TIFF declaring `width`×`height` with one tiny strip of data, and
    /// an IPTC record in its own tag (33723, as exiftool writes it) when `iptc` is not empty.
    package static func tiffDeclaring(width: Int, height: Int, iptc: [UInt8] = []) -> Data {
        // Little-endian header, then one IFD at offset 8, then 16 bytes of pixels, then the record.
        let count = iptc.isEmpty ? 9 : 10
        let pixels = 8 + 2 + count * 12 + 4
        var entries: [(tag: UInt16, type: UInt16, count: Int, value: UInt32)] = [
            (256, 4, 1, UInt32(width)), (257, 4, 1, UInt32(height)), (258, 3, 1, 8), (259, 3, 1, 1), (262, 3, 1, 1),
            (273, 4, 1, UInt32(pixels)), (277, 3, 1, 1), (278, 4, 1, UInt32(height)), (279, 4, 1, 16),
        ]
        if !iptc.isEmpty { entries.append((33723, 7, iptc.count, UInt32(pixels + 16))) }
        var bytes: [UInt8] = [0x49, 0x49, 42, 0, 8, 0, 0, 0]
        bytes += littleEndian16(entries.count)
        for entry in entries {
            bytes += littleEndian16(Int(entry.tag)) + littleEndian16(Int(entry.type)) + littleEndian32(entry.count)
            bytes += entry.type == 3 ? littleEndian16(Int(entry.value)) + [0, 0] : littleEndian32(Int(entry.value))
        }
        bytes += [0, 0, 0, 0]
        bytes += [UInt8](repeating: 128, count: 16)
        return Data(bytes + iptc)
    }

    // MARK: EXIF in PNG

    /// A PNG of `image` with an `eXIf` chunk carrying `orientation` (libpng reads it; libvips'
    /// PNG saver in 8.14 does not write one, so the chunk is added by hand).
    package static func png(_ image: VipsImage, orientation: Int) throws -> Data {
        let bytes = [UInt8](try Fixtures.png(image))
        // A big-endian TIFF structure holding one IFD entry: Orientation (0x0112), SHORT, 1.
        let exif: [UInt8] =
            [0x4D, 0x4D, 0, 42, 0, 0, 0, 8, 0, 1, 0x01, 0x12, 0, 3, 0, 0, 0, 1]
            + bigEndian16(orientation) + [0, 0] + [0, 0, 0, 0]
        let chunk = bigEndian32(exif.count) + Array("eXIf".utf8) + exif + bigEndian32(Int(crc32(Array("eXIf".utf8) + exif)))
        // After the signature (8) and the IHDR chunk (4 + 4 + 13 + 4).
        return Data(bytes[..<33] + chunk + bytes[33...])
    }

    // MARK: Bytes

    package static func bigEndian16(_ value: Int) -> [UInt8] { [UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)] }
    package static func littleEndian16(_ value: Int) -> [UInt8] { bigEndian16(value).reversed() }
    package static func bigEndian32(_ value: Int) -> [UInt8] { bigEndian16(value >> 16) + bigEndian16(value) }
    package static func littleEndian32(_ value: Int) -> [UInt8] { bigEndian32(value).reversed() }

    /// The CRC-32 that PNG chunks carry (ISO 3309, as zlib computes it).
    package static func crc32<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }

    package enum FixtureError: Error { case notFound(String) }
}

/// SplitMix64: a small seeded generator, so fuzz runs and random kill moments are repeatable.
package struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    package init(seed: UInt64) { state = seed }

    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
