import Foundation

/// Writes a run's report into a folder: `report.json` (the `RunReport`, as
/// `RunRecorder.reportJSON()` encodes it) and `index.html` (a page to look at the results, with
/// no network needed; see `HTMLReport`).
///
/// ```swift
/// let recorder = try RunRecorder(definition: pipeline.definition)
/// for await event in try pipeline.run() { recorder.record(event) }
/// try ReportWriter.write(recorder, to: folder, inputDirectory: pipeline.definition.baseDirectory)
/// ```
///
/// Each file is written to a temporary file in the folder and renamed, so a reader (a browser,
/// a CI job collecting artefacts) sees the previous report or the new one, never half a file.
package enum ReportWriter {
    /// The JSON report's file name in the report folder.
    package static let jsonFileName = "report.json"
    /// The HTML page's file name in the report folder.
    package static let htmlFileName = "index.html"

    /// Writes `report.json` and `index.html` into `directory`, creating it (and its parents).
    ///
    /// - Parameters:
    ///   - report: the run's report.
    ///   - directory: the folder to write into.
    ///   - inputDirectory: the folder relative input names resolve against (the pipeline
    ///     file's folder, `PipelineDefinition.baseDirectory`), for the input thumbnails; nil
    ///     resolves them against the current directory. An input that cannot be read is
    ///     previewed from its largest output instead.
    package static func write(_ report: RunReport, to directory: URL, inputDirectory: URL? = nil) throws(ReportWriterError) {
        try write(
            to: directory,
            json: { write throws(ReportWriterError) in
                do {
                    return write(try encodedJSON(report))
                } catch {
                    throw ReportWriterError(path: jsonFileName, reason: "cannot encode the report: \(error)")
                }
            }, page: { () throws(ReportWriterError) in HTMLReport(report: report, inputDirectory: inputDirectory) })
    }

    /// Writes the report `recorder` took from a run into `directory`, as `write(_:to:inputDirectory:)`
    /// writes a `RunReport`: its items go from the recorder's file to `report.json` a piece at a
    /// time, so a run of many inputs never holds them all.
    package static func write(_ recorder: RunRecorder, to directory: URL, inputDirectory: URL? = nil) throws(ReportWriterError) {
        try write(
            to: directory, json: { write throws(ReportWriterError) in try recorder.writeReportJSON(to: write) },
            page: { () throws(ReportWriterError) in try recorder.htmlReport(inputDirectory: inputDirectory) })
    }

    /// The same, from async code: the thumbnails are made with libvips, which must not block
    /// Swift's cooperative threads, so the work runs on a Dispatch queue and this awaits it.
    /// (Called from an async context, `write` picks this overload.)
    package static func write(_ report: RunReport, to directory: URL, inputDirectory: URL? = nil) async throws(ReportWriterError) {
        try await offCooperativeThreads { () throws(ReportWriterError) in try write(report, to: directory, inputDirectory: inputDirectory) }
    }

    /// The same, from async code, as for a `RunReport`.
    package static func write(_ recorder: RunRecorder, to directory: URL, inputDirectory: URL? = nil) async throws(ReportWriterError) {
        try await offCooperativeThreads { () throws(ReportWriterError) in try write(recorder, to: directory, inputDirectory: inputDirectory)
        }
    }

    private static func offCooperativeThreads(_ work: @escaping @Sendable () throws(ReportWriterError) -> Void)
        async throws(ReportWriterError)
    {
        // Dispatch's shared pool, at utility priority: a report is written once, after the run,
        // and needs no thread of its own.
        let result = await runBlocking(on: .global(qos: .utility)) { Result { () throws(ReportWriterError) in try work() } }
        try result.get()
    }

    /// `report.json` from what `json` hands its `write`, then `index.html` from `page`, into `directory`.
    private static func write(
        to directory: URL, json: (_ write: (Data) -> Bool) throws(ReportWriterError) -> Bool,
        page: () throws(ReportWriterError) -> HTMLReport
    ) throws(ReportWriterError) {
        let folder = directory.standardizedFileURL
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            throw ReportWriterError(path: folder.path, reason: "cannot create the folder: \(ErrorText.reason(error))")
        }
        try writeAtomically(to: folder.appendingPathComponent(jsonFileName).path, json)
        let html = try page().render()
        try writeAtomically(Data(html.utf8), to: folder.appendingPathComponent(htmlFileName).path)
    }

    /// The content of `report.json`: pretty-printed, sorted keys, ISO 8601 dates (the same bytes
    /// as `RunRecorder.reportJSON()`).
    package static func encodedJSON(_ report: RunReport) throws -> Data {
        try makeEncoder().encode(report)
    }

    /// The encoder of `report.json`, which `RunRecorder` also prints each item with.
    static func makeEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }

    /// A decoder of `report.json`.
    static func makeDecoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }

    /// Writes through a temporary file beside `path`, flushed, then renamed over `path`.
    package static func writeAtomically(_ data: Data, to path: String) throws(ReportWriterError) {
        try writeAtomically(to: path) { write in write(data) }
    }

    /// Writes what `body` hands its `write` (which returns false when the system refused it;
    /// `body` then returns false) through a temporary file beside `path`, flushed, then renamed
    /// over `path`: a file too large to hold in memory, written piece by piece.
    ///
    /// With `unlessUnchanged`, a file at `path` that already holds those very bytes is left as
    /// it is, and is no error where nothing can be written (a read-only or full file system): a
    /// run that changed nothing neither touches the file nor fails for it.
    static func writeAtomically(
        to path: String, unlessUnchanged: Bool = false, _ body: (_ write: (Data) -> Bool) throws(ReportWriterError) -> Bool
    ) throws(ReportWriterError) {
        do {
            try writeThroughTemporary(to: path, comparingWith: unlessUnchanged ? SameBytes(path: path) : nil, body)
        } catch {
            // The disk refused (a file not made, or not written): it may hold these bytes already.
            if unlessUnchanged, let current = SameBytes(path: path), try current.holds(body) { return }
            throw error
        }
    }

    /// `writeAtomically(to:unlessUnchanged:_:)`'s write; the rename is left out when `current`
    /// (the file at `path`) held every byte written.
    private static func writeThroughTemporary(
        to path: String, comparingWith current: SameBytes?, _ body: (_ write: (Data) -> Bool) throws(ReportWriterError) -> Bool
    ) throws(ReportWriterError) {
        let folder = (path as NSString).deletingLastPathComponent
        let name = (path as NSString).lastPathComponent
        // Named as outputs' are, with the writer's process, so that a killed writer's file is
        // told from a live one's. No sweep of output folders reaches this folder (a manifest's,
        // a report's, the journal's): the writers of this file sweep their own leftovers.
        TemporaryFileSweeper.sweepLeftovers(of: name, in: folder)
        let temporary = folder + "/" + ImageWriter.temporaryName(for: name)
        // As readable as any new file (a web server may serve it).
        let descriptor = ImageWriter.createTemporary(temporary, flags: O_WRONLY)
        guard descriptor >= 0 else { throw systemError(path) }
        var finished = false
        defer { if !finished { unlink(temporary) } }

        let written: Bool
        do {
            written = try body { data in
                current?.compare(data)
                return data.withUnsafeBytes { DescriptorWrite.all($0, to: descriptor) == 0 }
            }
        } catch {
            close(descriptor)
            throw error
        }
        if written, let current, current.isSameSoFar, current.isAtEnd {
            close(descriptor)
            return
        }
        guard written, fsync(descriptor) == 0 else {
            let error = systemError(path)
            close(descriptor)
            throw error
        }
        guard close(descriptor) == 0 else { throw systemError(path) }
        if let refusal = RenameTarget.refusal(at: path) {
            throw ReportWriterError(path: path, reason: "it is \(refusal), which is never replaced by a file")
        }
        guard rename(temporary, path) == 0 else { throw systemError(path) }
        finished = true
    }

    private static func systemError(_ path: String) -> ReportWriterError {
        ReportWriterError(path: path, reason: String(cString: strerror(errno)))
    }
}

/// A file's bytes, compared piece by piece with the bytes that would replace it.
private final class SameBytes {
    private let descriptor: Int32
    /// Whether every piece compared so far matched the file's next bytes.
    private(set) var isSameSoFar = true

    /// The file at `path`, or nil when there is none to read.
    init?(path: String) {
        // Only a regular file is compared: a FIFO would hold the open for ever.
        guard let file = try? RegularFile(opening: path) else { return nil }
        descriptor = dup(file.descriptor)
        guard descriptor >= 0 else { return nil }
    }

    deinit { close(descriptor) }

    /// Compares `data` with the file's next bytes.
    func compare(_ data: Data) {
        guard isSameSoFar else { return }
        var onDisk = Data(count: data.count)
        let count = onDisk.withUnsafeMutableBytes { Self.readFully($0, from: descriptor) }
        isSameSoFar = count == data.count && onDisk == data
    }

    /// Whether the file has no byte left past those compared.
    var isAtEnd: Bool {
        var byte: UInt8 = 0
        return withUnsafeMutableBytes(of: &byte) { Self.readFully($0, from: descriptor) } == 0
    }

    /// Whether the file holds exactly what `body` hands its `write`, which stops it at the first
    /// difference.
    func holds(_ body: (_ write: (Data) -> Bool) throws(ReportWriterError) -> Bool) throws(ReportWriterError) -> Bool {
        let ended = try body { data in
            compare(data)
            return isSameSoFar
        }
        return ended && isSameSoFar && isAtEnd
    }

    /// Reads until `buffer` is full or the file ends; the count read, or -1.
    private static func readFully(_ buffer: UnsafeMutableRawBufferPointer, from descriptor: Int32) -> Int {
        var done = 0
        while done < buffer.count {
            let count = read(descriptor, buffer.baseAddress! + done, buffer.count - done)
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return count < 0 ? -1 : done }
            done += count
        }
        return done
    }
}
