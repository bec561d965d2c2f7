import Foundation

/// Writes values as plain bytes for a record kept on disk and read back by `RecordReader` in the
/// same process: lengths and numbers in the machine's own order, strings as their UTF-8 bytes.
struct RecordWriter {
    private(set) var bytes: [UInt8] = []

    mutating func append(_ number: Int64) {
        withUnsafeBytes(of: number) { bytes.append(contentsOf: $0) }
    }

    mutating func append(_ number: UInt32) {
        withUnsafeBytes(of: number) { bytes.append(contentsOf: $0) }
    }

    mutating func append(_ text: String) {
        append(UInt32(text.utf8.count))
        bytes.append(contentsOf: text.utf8)
    }

    /// Bytes of another record, after their length.
    mutating func append(record: [UInt8]) {
        append(UInt32(record.count))
        bytes.append(contentsOf: record)
    }

    /// A flag, then the text when there is one.
    mutating func append(_ text: String?) {
        bytes.append(text == nil ? 0 : 1)
        if let text { append(text) }
    }
}

/// Reads back what `RecordWriter` wrote, in the same order; nil from any read past the end.
struct RecordReader {
    private let bytes: [UInt8]
    private var position = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// Whether every byte was read.
    var isAtEnd: Bool { position == bytes.count }

    mutating func int64() -> Int64? {
        take(8).map { slice in slice.withUnsafeBytes { $0.loadUnaligned(as: Int64.self) } }
    }

    mutating func uint32() -> UInt32? {
        take(4).map { slice in slice.withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) } }
    }

    mutating func string() -> String? {
        guard let count = uint32(), let slice = take(Int(count)) else { return nil }
        return String(decoding: slice, as: UTF8.self)
    }

    /// The bytes of a record appended whole (`RecordWriter.append(record:)`).
    mutating func record() -> [UInt8]? {
        guard let count = uint32(), let slice = take(Int(count)) else { return nil }
        return Array(slice)
    }

    mutating func optionalString() -> String?? {
        guard let flag = take(1)?.first else { return nil }
        guard flag == 1 else { return .some(nil) }
        return string().map { .some($0) }
    }

    private mutating func take(_ count: Int) -> ArraySlice<UInt8>? {
        guard count <= bytes.count - position else { return nil }
        defer { position += count }
        return bytes[position..<position + count]
    }
}
