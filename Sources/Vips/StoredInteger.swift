/// The unsigned integers file formats store as bytes (a chunk's length, a box's size, a tag's
/// offset): the one reader of them for every walk of a file's structure.
package enum StoredInteger {
    /// The integer in the `count` (1 to 4) bytes at `offset`, most significant first, or least
    /// significant first when `bigEndian` is false; `byte` gives a byte of the file, nil past its
    /// end. Nil when any of the bytes is missing.
    package static func at(_ offset: Int, count: Int = 4, bigEndian: Bool = true, byte: (Int) -> UInt8?) -> Int? {
        precondition((1...4).contains(count), "an integer of \(count) bytes")
        var value = 0
        for index in 0..<count {
            guard let next = byte(offset + (bigEndian ? index : count - 1 - index)) else { return nil }
            value = value << 8 | Int(next)
        }
        return value
    }
}

extension RandomAccessCollection<UInt8> where Index == Int {
    /// The integer in the `count` (1 to 4) bytes at index `offset`, most significant first, or
    /// least significant first when `bigEndian` is false; nil when they run past the end.
    package func storedInteger(at offset: Int, count: Int = 4, bigEndian: Bool = true) -> Int? {
        StoredInteger.at(offset, count: count, bigEndian: bigEndian) { indices.contains($0) ? self[$0] : nil }
    }
}
