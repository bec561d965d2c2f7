/// Clears the creation and modification times an ISO BMFF writer puts in a movie's headers.
///
/// libavif stamps an image sequence's `mvhd`, `tkhd` and `mdhd` boxes with the wall clock when
/// the file is finished; left there, one animation encoded in two different seconds would be two
/// files, with two `{hash}` names and two ETags. Zero is what the format calls "unknown", and what
/// ffmpeg writes unless told a time.
enum MovieHeaderTimes {
    /// Sets every creation and modification time in the file's movie headers to zero, in place.
    /// Boxes that are cut short or malformed are left as they are.
    static func clear(in file: UnsafeMutableRawBufferPointer) {
        clear(in: file, from: 0, to: file.count, inside: nil)
    }

    /// The boxes whose children are walked: the movie, its tracks and their media.
    private static let containers: Set<String> = ["moov", "trak", "mdia"]
    /// The full boxes that carry the two times, right after their version and flags.
    private static let headers: Set<String> = ["mvhd", "tkhd", "mdhd"]

    /// Walks the boxes between `start` and `end`, which are the children of `parent` (nil at the
    /// top of the file, where no header is looked for).
    private static func clear(in file: UnsafeMutableRawBufferPointer, from start: Int, to end: Int, inside parent: String?) {
        var offset = start
        while offset + 8 <= end {
            let declared = Int(readUInt32(file, at: offset))
            let type = String(decoding: file[(offset + 4)..<(offset + 8)], as: UTF8.self)
            var headerSize = 8
            var size = declared
            if declared == 1 {
                guard offset + 16 <= end else { return }
                let large = readUInt64(file, at: offset + 8)
                guard large <= UInt64(end - offset) else { return }
                size = Int(large)
                headerSize = 16
            } else if declared == 0 {
                size = end - offset
            }
            guard size >= headerSize, size <= end - offset else { return }
            let body = offset + headerSize
            let boxEnd = offset + size
            if containers.contains(type) {
                clear(in: file, from: body, to: boxEnd, inside: type)
            } else if headers.contains(type), parent != nil {
                zeroTimes(in: file, body: body, end: boxEnd)
            }
            offset = boxEnd
        }
    }

    /// Zeroes the two times of a full box whose body starts at `body`: 64 bits each in version 1,
    /// 32 bits each in version 0.
    private static func zeroTimes(in file: UnsafeMutableRawBufferPointer, body: Int, end: Int) {
        guard body < end else { return }
        let width = file[body] == 1 ? 16 : 8
        let times = body + 4
        guard times + width <= end else { return }
        for index in times..<(times + width) { file[index] = 0 }
    }

    private static func readUInt32(_ file: UnsafeMutableRawBufferPointer, at offset: Int) -> UInt32 {
        (0..<4).reduce(UInt32(0)) { ($0 << 8) | UInt32(file[offset + $1]) }
    }

    private static func readUInt64(_ file: UnsafeMutableRawBufferPointer, at offset: Int) -> UInt64 {
        (0..<8).reduce(UInt64(0)) { ($0 << 8) | UInt64(file[offset + $1]) }
    }
}
