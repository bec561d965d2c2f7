import Foundation

/// Writes animated GIFs byte by byte, with what libvips' GIF saver never writes: frames smaller
/// than the canvas, placed anywhere on it, with a transparent colour and a disposal method of
/// their own, as screen and terminal recorders write them.
package struct GIFWriter {
    /// What is done with a frame's area before the next frame is drawn.
    package enum Disposal: UInt8, Sendable {
        /// Left as drawn.
        case keep = 1
        /// Cleared to the background (transparent).
        case background = 2
        /// Put back as it was before the frame was drawn.
        case previous = 3
    }

    /// One frame: a `width`×`height` rectangle at `left`, `top` of palette indices, row by row.
    package struct Frame {
        package var left: Int
        package var top: Int
        package var width: Int
        package var height: Int
        package var indices: [UInt8]
        /// How long the frame shows, in hundredths of a second (as GIF keeps delays).
        package var delay: Int
        package var disposal: Disposal
        /// The palette index drawn as "leave the pixel below", or nil for none.
        package var transparent: UInt8?

        package init(
            left: Int, top: Int, width: Int, height: Int, indices: [UInt8], delay: Int, disposal: Disposal = .keep,
            transparent: UInt8? = nil
        ) {
            self.left = left
            self.top = top
            self.width = width
            self.height = height
            self.indices = indices
            self.delay = delay
            self.disposal = disposal
            self.transparent = transparent
        }
    }

    package let width: Int
    package let height: Int
    /// Up to 256 RGB colours: the global palette.
    package let palette: [[UInt8]]

    package init(width: Int, height: Int, palette: [[UInt8]]) {
        self.width = width
        self.height = height
        self.palette = palette
    }

    /// The GIF of `frames`, looping for ever.
    package func data(_ frames: [Frame]) -> Data {
        data(frames.map { ($0, Self.lzw($0.indices)) })
    }

    /// The GIF of `frames`, each with its image data compressed already.
    private func data(_ frames: [(frame: Frame, imageData: [UInt8])]) -> Data {
        var bytes = Array("GIF89a".utf8)
        // The screen, with a global palette of 256 entries (flags: present, 8 bits, size 2^8).
        bytes += HostileFixtures.littleEndian16(width) + HostileFixtures.littleEndian16(height) + [0xF7, 0, 0]
        for index in 0..<256 { bytes += index < palette.count ? palette[index] : [0, 0, 0] }
        bytes += [0x21, 0xFF, 0x0B] + Array("NETSCAPE2.0".utf8) + [3, 1, 0, 0, 0]
        for (frame, imageData) in frames {
            let flags = frame.disposal.rawValue << 2 | (frame.transparent == nil ? 0 : 1)
            bytes += [0x21, 0xF9, 4, flags] + HostileFixtures.littleEndian16(frame.delay) + [frame.transparent ?? 0, 0]
            bytes += [0x2C] + HostileFixtures.littleEndian16(frame.left) + HostileFixtures.littleEndian16(frame.top)
            bytes += HostileFixtures.littleEndian16(frame.width) + HostileFixtures.littleEndian16(frame.height) + [0]
            bytes += imageData
        }
        bytes.append(0x3B)
        return Data(bytes)
    }

    /// An animation of `frames` whole frames of `width`×`height` random pixels in six colours,
    /// each shown `delay` hundredths of a second: slow to decode and encode for its size. The
    /// frames repeat a few different ones: a decoder does all the work for each frame anyway,
    /// and an unoptimized, sanitized build compresses pixel by pixel slowly.
    package static func noise(frames: Int, width: Int, height: Int, delay: Int = 4, seed: UInt64 = 1) -> Data {
        var generator = SeededGenerator(seed: seed)
        let palette: [[UInt8]] = [[0, 0, 0], [255, 255, 255], [255, 0, 0], [0, 255, 0], [0, 0, 255], [250, 200, 0]]
        let different = (0..<min(frames, 7)).map { _ in
            let frame = Frame(
                left: 0, top: 0, width: width, height: height, indices: randomIndices(width * height, below: 6, &generator), delay: delay)
            return (frame: frame, imageData: lzw(frame.indices))
        }
        return GIFWriter(width: width, height: height, palette: palette).data((0..<frames).map { different[$0 % different.count] })
    }

    /// `count` palette indices below `limit`, eight from each random word, into a buffer: an
    /// unoptimized, sanitized build runs `random(in:)` pixel by pixel slowly enough to be most of
    /// the time of a test that decodes a long noise animation.
    private static func randomIndices(_ count: Int, below limit: UInt8, _ generator: inout SeededGenerator) -> [UInt8] {
        var indices = [UInt8](repeating: 0, count: count)
        indices.withUnsafeMutableBufferPointer { buffer in
            var word: UInt64 = 0
            for position in 0..<buffer.count {
                if position % 8 == 0 { word = generator.next() } else { word >>= 8 }
                buffer[position] = UInt8(truncatingIfNeeded: word) % limit
            }
        }
        return indices
    }

    /// `indices` as GIF image data: LZW with a minimum code size of 8, every code a literal and
    /// a clear code often enough that codes stay 9 bits wide (valid, if not compressed).
    static func lzw(_ indices: [UInt8]) -> [UInt8] {
        let clear = 256
        let end = 257
        var packed: [UInt8] = []
        packed.reserveCapacity(indices.count * 9 / 8 + indices.count / 250 * 2 + 8)
        var accumulator = 0
        var bits = 0
        func emit(_ code: Int) {
            accumulator |= code << bits
            bits += 9
            while bits >= 8 {
                packed.append(UInt8(truncatingIfNeeded: accumulator))
                accumulator >>= 8
                bits -= 8
            }
        }
        emit(clear)
        // A decoder adds a table entry for every code after the first since a clear: codes widen
        // to 10 bits at entry 512, which 250 literals never reach.
        for (position, index) in indices.enumerated() {
            if position > 0, position % 250 == 0 { emit(clear) }
            emit(Int(index))
        }
        emit(end)
        if bits > 0 { packed.append(UInt8(truncatingIfNeeded: accumulator)) }
        var data: [UInt8] = [8]
        for start in stride(from: 0, to: packed.count, by: 255) {
            let block = packed[start..<min(packed.count, start + 255)]
            data.append(UInt8(block.count))
            data += block
        }
        data.append(0)
        return data
    }
}
