import Foundation

/// The frames of an animated WebP, counted from its chunks without decoding any. libvips'
/// WebP loader counts them too as it opens the header, but in time that grows with the square
/// of their number: a small file of a hundred thousand frames holds a worker for many seconds
/// before any limit is asked. Its RIFF chunks (a tag, a little-endian size, the data padded to
/// an even length) are walked by their sizes, each `ANMF` chunk a frame.
enum WebPStructure {
    /// The `ANMF` chunks of the WebP in `bytes`, counted to the end of its chunks or of its
    /// bytes; nil when `bytes` are not a WebP.
    static func frameCount(_ bytes: SourceBytes) -> Int? {
        guard bytes.matches(Array("RIFF".utf8), at: 0), bytes.matches(Array("WEBP".utf8), at: 8) else { return nil }
        let frame = Array("ANMF".utf8)
        var (offset, frames) = (12, 0)
        // Each chunk moves the offset on by at least its 8 bytes of tag and size: the walk ends
        // at the end of the file.
        while let size = bytes.word(at: offset + 4, bigEndian: false) {
            if bytes.matches(frame, at: offset) { frames += 1 }
            offset += 8 + size + (size & 1)
        }
        return frames
    }
}
