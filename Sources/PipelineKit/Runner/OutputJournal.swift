import Foundation
import Vips

/// The record of outputs written, for incremental runs: for each output path, a fingerprint of
/// what made it (the input's version, the output's steps and encoder, the decode settings, the
/// tool's version) and the file's size and modification time when written.
///
/// Records are found by the output's planned path: a path whose template has `{width}` or
/// `{height}` is known only once the image is made, so its record also holds the path as planned
/// (placeholders unfilled), and the next run finds it from the plan alone. The size it will have
/// is not predicted: the fingerprint fixes the input and every setting, so the file it names is the
/// one this run would write.
///
/// It is an append-only file of JSON lines, one line appended only after its output was renamed
/// into place: a killed run can lose the last lines (those outputs are made again) but never
/// records an output that was not written. A torn last line is ignored when read.
final class OutputJournal: Sendable {
    struct Record: Codable, Sendable, Equatable {
        let path: String
        let fingerprint: String
        let size: Int64
        let modified: String
        let width: Int
        let height: Int
        /// The path as planned, with `{width}`/`{height}` unfilled, when it differs from `path`.
        var planned: String? = nil

        /// What the record is found by: the path as planned.
        var key: String { planned ?? path }
    }

    let file: URL
    private let state: Locked<(records: [String: Record], lines: Int, descriptor: Int32)>

    init(file: URL) {
        self.file = file
        var records: [String: Record] = [:]
        var lines = 0
        if let data = FileManager.default.contents(atPath: file.path) {
            let decoder = JSONDecoder()
            for line in data.split(separator: UInt8(ascii: "\n")) {
                guard let record = try? decoder.decode(Record.self, from: Data(line)) else { continue }
                records[record.key] = record
                lines += 1
            }
        }
        state = Locked((records, lines, -1))
    }

    /// The record of the output planned at `planned` when the file it wrote is still the one
    /// written with `fingerprint`.
    func upToDate(_ planned: String, fingerprint: String) -> Record? {
        guard let record = state.withLock({ $0.records[planned] }), record.fingerprint == fingerprint,
              let (size, modified) = Self.stamp(of: record.path), size == record.size, modified == record.modified else { return nil }
        return record
    }

    /// Notes that `path`, planned as `planned`, was written with `fingerprint` (called after the rename).
    func recordWritten(_ path: String, planned: String, fingerprint: String, size: ImageSize) {
        guard let (bytes, modified) = Self.stamp(of: path) else { return }
        let record = Record(path: path, fingerprint: fingerprint, size: bytes, modified: modified, width: size.width, height: size.height,
                            planned: planned == path ? nil : planned)
        guard var line = try? JSONEncoder().encode(record) else { return }
        line.append(UInt8(ascii: "\n"))
        state.withLock { state in
            state.records[record.key] = record
            state.lines += 1
            if state.descriptor < 0 {
                try? FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
                state.descriptor = open(file.path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
            }
            guard state.descriptor >= 0 else { return }
            // One write(2) a line: with O_APPEND, lines from two processes do not interleave.
            _ = line.withUnsafeBytes { write(state.descriptor, $0.baseAddress, $0.count) }
        }
    }

    /// Flushes the journal, and rewrites it without superseded lines when they are most of it.
    func finish() {
        state.withLock { state in
            if state.descriptor >= 0 {
                fsync(state.descriptor)
                close(state.descriptor)
                state.descriptor = -1
            }
            guard state.lines > 2 * state.records.count + 100 else { return }
            let encoder = JSONEncoder()
            var data = Data()
            for record in state.records.values.sorted(by: { $0.key < $1.key }) {
                guard let line = try? encoder.encode(record) else { continue }
                data.append(line)
                data.append(UInt8(ascii: "\n"))
            }
            if (try? data.write(to: file, options: .atomic)) != nil { state.lines = state.records.count }
        }
    }

    private static func stamp(of path: String) -> (Int64, String)? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return (Int64(info.st_size), "\(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec)")
    }

    /// The fingerprint of one output made from an input at `version`: everything that changes
    /// its pixels or bytes. The decode settings and every output's first step are included,
    /// since together they set the scale the input is decoded at.
    static func fingerprint(version: String, output: OutputDefinition, definition: PipelineDefinition) -> String {
        let decode = definition.decompress
        let parts = [
            "pipeline \(PipelineKitInfo.version)", version,
            "decode autorotate=\(decode.autorotate) failOn=\(decode.failOn.rawValue) fast=\(decode.fastShrinkOnLoad)",
            "first steps " + definition.outputs.map { $0.steps.first?.identifier ?? "-" }.joined(separator: ";"),
            "steps " + output.steps.map(\.identifier).joined(separator: ";"),
            "encoder " + output.encoder.vipsSuffix + " background=\(output.encoder.background)",
        ]
        return FNV1a.hex(parts.joined(separator: "\n"))
    }
}
