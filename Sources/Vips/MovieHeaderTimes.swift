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
        clear(in: file, from: 0, to: file.count, nested: false)
    }

    /// The boxes whose children are walked: the movie, its tracks and their media.
    private static let containers: Set<String> = ["moov", "trak", "mdia"]
    /// The full boxes that carry the two times, right after their version and flags.
    private static let headers: Set<String> = ["mvhd", "tkhd", "mdhd"]

    /// Walks the boxes between `start` and `end`: the file's top level, or (`nested`) a
    /// container's children, where the headers are.
    private static func clear(in file: UnsafeMutableRawBufferPointer, from start: Int, to end: Int, nested: Bool) {
        var offset = start
        while offset + 8 <= end {
            let size: Int
            let header: Int
            switch ISOBoxSize.at(offset, byte: { $0 < end ? file[$0] : nil }) {
            case .declared(let declared, let length)?: (size, header) = (declared, length)
            case .toTheEnd?: (size, header) = (end - offset, 8)
            case .cutShort?, .beyondAnyFile?, nil: return
            }
            guard size >= header, size <= end - offset else { return }
            let type = String(decoding: file[(offset + 4)..<(offset + 8)], as: UTF8.self)
            if containers.contains(type) {
                clear(in: file, from: offset + header, to: offset + size, nested: true)
            } else if nested, headers.contains(type) {
                zeroTimes(in: file, body: offset + header, end: offset + size)
            }
            offset += size
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
}
