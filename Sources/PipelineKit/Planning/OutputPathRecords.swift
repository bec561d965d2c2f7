import Foundation
import Vips

/// The local files a run writes, kept on disk as the plan checks them: each file's digest and
/// path, so that a plan of many outputs holds none of them in memory. A run of a pipeline file
/// claims them (`RunClaim`) against runs of other files.
final class OutputPathRecords: Sendable {
    private let reader: SpillFile.Reader
    private let size: Int64

    private init(reader: SpillFile.Reader, size: Int64) {
        self.reader = reader
        self.size = size
    }

    /// Gathers the records as the plan checks its writes.
    struct Builder {
        private var file: SpillFile?

        /// A builder that keeps its records in a temporary file; one that keeps nothing when
        /// none can be made (the run then claims nothing).
        init() {
            file = try? SpillFile(for: "the output paths")
        }

        /// Adds the file at `path`, whose real path has `digest`.
        mutating func add(_ digest: PathDigest, path: String) {
            let pathBytes = Array(path.utf8.prefix(Int(UInt16.max)))
            let length = UInt16(pathBytes.count)
            let record = digest.bytes + [UInt8(length >> 8), UInt8(length & 0xFF)] + pathBytes
            // A record that cannot be kept drops them all: a partial claim would miss clashes.
            if (try? file?.append(Data(record))) == nil { file = nil }
        }

        /// The records, or nil when they could not be kept.
        consuming func finish() -> OutputPathRecords? {
            guard let file, let reader = file.reader() else { return nil }
            return OutputPathRecords(reader: reader, size: file.size)
        }
    }

    /// Calls `body` with each record's digest and path, in the order they were added, until it
    /// returns false.
    func scan(_ body: (PathDigest, String) throws -> Bool) rethrows {
        let piece = 1 << 20
        var offset: Int64 = 0
        var pending = Data()
        while offset < size {
            guard let more = reader.read(Int(min(Int64(piece), size - offset)), at: offset) else { return }
            pending.append(more)
            offset += Int64(more.count)
            // Whole records only; the rest waits for the next piece.
            var start = pending.startIndex
            while pending.endIndex - start >= 18 {
                guard let length = pending.storedInteger(at: start + 16, count: 2), pending.endIndex - start >= 18 + length else {
                    break
                }
                let digest = PathDigest(bytes: pending[start..<start + 16])
                let path = String(decoding: pending[start + 18..<start + 18 + length], as: UTF8.self)
                guard try body(digest, path) else { return }
                start += 18 + length
            }
            pending = Data(pending[start...])
        }
    }
}
