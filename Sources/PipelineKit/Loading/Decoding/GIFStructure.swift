import Foundation
import Vips

/// Whether a GIF's blocks run to its trailer. libvips 8.14's GIF loader counts only the frames
/// that are whole and drops a cut-off last one silently, even with `fail_on`: an animation cut
/// short would become a shorter animation. Its blocks (extensions, frames, each a run of
/// length-prefixed sub-blocks) are walked by their lengths, without decoding any pixel. The walk
/// also counts the frames, which libvips stops counting past `ImageDecoder.gifFramesCounted`.
enum GIFStructure {
    /// What walking the blocks found.
    enum Ending: Equatable {
        /// The trailer ends the blocks, after `frames` frames.
        case trailer(frames: Int)
        /// The bytes end before the trailer, after `frames` whole frames.
        case truncated(frames: Int)
        /// A byte that begins no block: libvips' loader decides what it makes of that.
        case unknown
    }

    /// How the GIF in `source` ends.
    static func ending(of source: EncodedSource) -> Ending {
        source.walkingBytes { bytes in walk { bytes.byte(at: $0) } } ?? .unknown
    }

    /// Walks the blocks from the screen descriptor on, reading each byte by `byte` (nil past
    /// the end). Every step moves forward, so the walk ends within the bytes there are.
    static func walk(_ byte: (Int) -> UInt8?) -> Ending {
        guard let flags = byte(10) else { return .truncated(frames: 0) }
        var offset = 13 + colourTableBytes(flags)
        var frames = 0
        while true {
            guard let introducer = byte(offset) else { return .truncated(frames: frames) }
            switch introducer {
            case 0x3B:
                return .trailer(frames: frames)
            case 0x21:
                // An extension: its label, then sub-blocks.
                guard let next = skipSubBlocks(from: offset + 2, byte) else { return .truncated(frames: frames) }
                offset = next
            case 0x2C:
                // A frame: its descriptor, a local colour table, the LZW code size, then sub-blocks.
                guard let frameFlags = byte(offset + 9) else { return .truncated(frames: frames) }
                guard let next = skipSubBlocks(from: offset + 10 + colourTableBytes(frameFlags) + 1, byte) else {
                    return .truncated(frames: frames)
                }
                offset = next
                frames += 1
            default:
                return .unknown
            }
        }
    }

    /// The frames of the GIF in `source`, counted to its trailer or to the end of its bytes; nil
    /// when a byte begins no block.
    static func frameCount(of source: EncodedSource) -> Int? {
        switch ending(of: source) {
        case .trailer(let frames), .truncated(let frames): frames
        case .unknown: nil
        }
    }

    /// The bytes of the colour table a screen or frame descriptor's `flags` announce.
    private static func colourTableBytes(_ flags: UInt8) -> Int {
        flags & 0x80 == 0 ? 0 : 3 << (Int(flags & 7) + 1)
    }

    /// The offset after the sub-blocks starting at `offset` (their zero-length terminator
    /// included), or nil when the bytes end first.
    private static func skipSubBlocks(from start: Int, _ byte: (Int) -> UInt8?) -> Int? {
        var offset = start
        while true {
            guard let length = byte(offset) else { return nil }
            offset += 1 + Int(length)
            if length == 0 { return offset }
        }
    }
}
