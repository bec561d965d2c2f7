/// How many bytes a box of an ISO base media file (AVIF, HEIF, a JPEG XL or JPEG 2000 file)
/// declares, as its header says: a 32-bit size, or 1 and a 64-bit size after the type, or 0 for
/// a box that runs to the end of the file.
package enum ISOBoxSize: Equatable {
    /// `size` bytes, the header's `header` (8 or 16) among them.
    case declared(size: Int, header: Int)
    /// The box runs to the end of the file.
    case toTheEnd
    /// The bytes end inside the 64-bit size.
    case cutShort
    /// A 64-bit size larger than any file.
    case beyondAnyFile

    /// The size of the box whose header starts at `offset`, the file's bytes given by `byte` (nil
    /// past their end); nil when the 32-bit size cannot be read.
    package static func at(_ offset: Int, byte: (Int) -> UInt8?) -> ISOBoxSize? {
        guard let size32 = StoredInteger.at(offset, byte: byte) else { return nil }
        switch size32 {
        case 0: return .toTheEnd
        case 1:
            guard let high = StoredInteger.at(offset + 8, byte: byte), let low = StoredInteger.at(offset + 12, byte: byte) else {
                return .cutShort
            }
            // Refused so, the size cannot overflow an Int.
            guard high < 1 << 31 else { return .beyondAnyFile }
            return .declared(size: high << 32 | low, header: 16)
        default: return .declared(size: size32, header: 8)
        }
    }
}
