import Foundation
import Vips

/// Reading the journal's file: its records under a shared lock, or only those of some paths.
extension OutputJournal {
    /// What a read of the journal found besides its records.
    struct ReadCounts {
        /// Lines read that were not records.
        var damaged = 0
        /// The file's lines, read or passed over.
        var lines = 0
        /// Of a read of some paths' records: the file's distinct planned paths, counted from the
        /// lines' text, not decoded.
        var plannedPaths = 0
    }

    /// Hands each record in the journal at `path` to `each`, oldest first, read under a shared
    /// lock so no append is half seen.
    static func read(_ path: String, naming wanted: [[UInt8]]?, each: (Record) -> Void) -> ReadCounts {
        // Anything but a regular file (a FIFO would hold the open for ever) records nothing.
        guard let file = try? RegularFile(opening: path) else { return ReadCounts() }
        flock(file.descriptor, LOCK_SH)
        defer { flock(file.descriptor, LOCK_UN) }
        return read(descriptor: file.descriptor, naming: wanted, each: each)
    }

    /// Reads every record, or, with `wanted` (paths as a record's JSON writes them), only the
    /// lines that hold one of them, counting the file's lines and planned paths as it passes.
    static func read(descriptor: Int32, naming wanted: [[UInt8]]? = nil, each: (Record) -> Void) -> ReadCounts {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        var offset: off_t = 0
        while true {
            let count = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, offset) }
            guard count > 0 else { break }
            data.append(contentsOf: buffer[..<count])
            offset += off_t(count)
        }
        var counts = ReadCounts()
        var plannedPaths = Set<UInt64>()
        let decoder = JSONDecoder()
        let lines = data.split(separator: UInt8(ascii: "\n"))
        counts.lines = lines.count
        for (index, line) in lines.enumerated() {
            // An unterminated last line was cut short (see the type's summary).
            if index == lines.count - 1, data.last != UInt8(ascii: "\n") {
                counts.damaged += 1
                continue
            }
            if let wanted {
                if let path = plannedPathHash(line) { plannedPaths.insert(path) }
                guard wanted.contains(where: { line.contains(bytes: $0) }) else { continue }
            }
            guard let record = try? decoder.decode(Record.self, from: Data(line)) else {
                counts.damaged += 1
                continue
            }
            each(record)
        }
        counts.plannedPaths = plannedPaths.count
        return counts
    }

    private static let plannedKey = Array(#""planned":""#.utf8)
    private static let pathKey = Array(#""path":""#.utf8)

    /// The hash of the planned path a record's line holds, as its JSON writes it (the text of
    /// `"planned"`, else of `"path"`), or nil when it has neither. A key's quotes cannot occur
    /// inside a string, where every quote is escaped.
    static func plannedPathHash(_ line: Data) -> UInt64? {
        line.withUnsafeBytes { bytes -> UInt64? in
            guard
                let key = bytes.offset(of: plannedKey).map({ $0 + plannedKey.count })
                    ?? bytes.offset(of: pathKey).map({ $0 + pathKey.count })
            else { return nil }
            // The text ends at the first quote no backslash escapes.
            var end = key
            while end < bytes.count, bytes[end] != UInt8(ascii: "\"") { end += bytes[end] == UInt8(ascii: "\\") ? 2 : 1 }
            guard end < bytes.count else { return nil }
            return FNV1a.hash(Data(bytes[key..<end]))
        }
    }
}

extension Data {
    /// Whether these bytes hold `needle` somewhere.
    fileprivate func contains(bytes needle: [UInt8]) -> Bool {
        withUnsafeBytes { $0.offset(of: needle) } != nil
    }
}

extension UnsafeRawBufferPointer {
    /// Where `needle` first starts in these bytes, or nil.
    fileprivate func offset(of needle: [UInt8]) -> Int? {
        guard let first = needle.first else { return 0 }
        return needle.withUnsafeBytes { needle in
            guard let base = baseAddress, let pattern = needle.baseAddress, count >= needle.count else { return nil }
            var start = 0
            // Each place the first byte is found, compared whole.
            while start <= count - needle.count, let found = memchr(base + start, Int32(first), count - needle.count - start + 1) {
                if memcmp(found, pattern, needle.count) == 0 { return base.distance(to: UnsafeRawPointer(found)) }
                start = base.distance(to: UnsafeRawPointer(found)) + 1
            }
            return nil
        }
    }
}
