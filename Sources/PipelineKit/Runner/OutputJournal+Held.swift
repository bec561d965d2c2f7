import Foundation

extension OutputJournal {
    /// What the journal keeps of a record read from the file, in numbers where the file has
    /// text: a re-run holds one for every output the last run made, so it keeps a few numbers
    /// and no string of its own unless the record is a rare one.
    struct Held {
        /// The run's own fingerprint (16 hex digits) as its number.
        let fingerprint: UInt64
        let size: Int64
        /// The modification time written.
        let seconds: Int64
        let nanoseconds: Int32
        let width: Int32
        let height: Int32
        /// What few records have: a path written other than the planned one (`{width}`), a
        /// searched quality, or text the numbers cannot hold.
        let rare: Rare?

        final class Rare: Sendable {
            let path: String?
            let quality: Int?
            let score: Double?
            /// The score the search was for.
            let target: Double?
            /// A tile pyramid's bytes (`Record.bytes`).
            let bytes: Int64?
            /// A remote input's size (`Record.source`).
            let source: String?
            /// The fingerprint the file was made with, when another's (`Record.tag`).
            let tag: String?
            /// A fingerprint or time not as this tool writes them, kept as written.
            let fingerprint: String?
            let modified: String?

            init(
                path: String?, quality: Int?, score: Double?, target: Double?, bytes: Int64?, source: String?, tag: String?,
                fingerprint: String?, modified: String?
            ) {
                self.path = path
                self.quality = quality
                self.score = score
                self.target = target
                self.bytes = bytes
                self.source = source
                self.tag = tag
                self.fingerprint = fingerprint
                self.modified = modified
            }
        }

        init(_ record: Record) {
            let fingerprint = Self.number(fingerprint: record.fingerprint)
            let modified = Self.time(record.modified)
            self.fingerprint = fingerprint ?? 0
            size = record.size
            seconds = modified?.seconds ?? 0
            nanoseconds = modified?.nanoseconds ?? 0
            width = Int32(clamping: record.width)
            height = Int32(clamping: record.height)
            let path = record.planned == nil ? nil : record.path
            rare =
                path == nil && record.quality == nil && record.score == nil && record.bytes == nil && record.source == nil
                    && record.tag == nil && fingerprint != nil && modified != nil
                ? nil
                : Rare(
                    path: path, quality: record.quality, score: record.score, target: record.target, bytes: record.bytes,
                    source: record.source,
                    tag: record.tag, fingerprint: fingerprint == nil ? record.fingerprint : nil,
                    modified: modified == nil ? record.modified : nil)
        }

        /// The path the record's file was written at, found by the planned path `key`.
        func path(key: DiskPath) -> String { rare?.path ?? key.path }

        /// Whether the record was written with `fingerprint`.
        func isMade(with fingerprint: String) -> Bool {
            if let text = rare?.fingerprint { return text == fingerprint }
            return Self.number(fingerprint: fingerprint) == self.fingerprint
        }

        /// Whether the file's size and modification time, `stamp`, are the ones written.
        func matches(_ stamp: FileStamp) -> Bool {
            rare?.modified == nil && stamp.size == size && stamp.seconds == seconds && stamp.nanoseconds == nanoseconds
        }

        /// The record as the file has it, for the planned path `key`.
        func record(key: DiskPath) -> Record {
            Record(
                path: path(key: key), fingerprint: rare?.fingerprint ?? String(format: "%016llx", fingerprint), size: size,
                modified: rare?.modified ?? OutputJournal.text(seconds: Int(seconds), nanoseconds: Int(nanoseconds)),
                width: Int(width), height: Int(height),
                planned: rare?.path == nil ? nil : key.path, quality: rare?.quality, score: rare?.score, target: rare?.target,
                bytes: rare?.bytes,
                source: rare?.source, tag: rare?.tag)
        }

        /// A fingerprint as this tool writes it (16 lowercase hex digits) as its number, else nil.
        static func number(fingerprint text: String) -> UInt64? {
            guard text.utf8.count == 16, text.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) else {
                return nil
            }
            return UInt64(text, radix: 16)
        }

        /// A modification time as a record writes it (`seconds.nanoseconds`, the nanoseconds
        /// unpadded), or nil for other text.
        static func time(_ text: String) -> (seconds: Int64, nanoseconds: Int32)? {
            let parts = text.split(separator: ".", omittingEmptySubsequences: false)
            guard parts.count == 2, let seconds = Int64(parts[0]), let nanoseconds = Int32(parts[1]), nanoseconds >= 0,
                OutputJournal.text(seconds: Int(seconds), nanoseconds: Int(nanoseconds)) == text
            else { return nil }
            return (seconds, nanoseconds)
        }
    }
}
