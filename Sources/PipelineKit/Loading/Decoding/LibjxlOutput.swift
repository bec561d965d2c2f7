import Foundation

/// Keeps libjxl's debugging lines off the terminal. libjxl 0.7 (Debian 12's) prints a trace of
/// `./lib/jxl/…cc:575: JXL_FAILURE: …` lines on stderr from inside the library when it decodes a
/// damaged JPEG XL, once for each try: they are not the pipeline's output, and a reason that
/// says what went wrong lies in them (libvips says only "error JxlDecoderProcessInput").
///
/// stderr is file descriptor 2 for the whole process, and nothing in libjxl lets it be told
/// where to write. So while a JPEG XL is decoded, descriptor 2 points at an unlinked temporary
/// file, and JPEG XL decodes take turns (`gate`): whatever libjxl writes meanwhile is that
/// decode's, exactly. Afterwards descriptor 2 is put back and every line that is not libjxl's
/// (another thread's warning written meanwhile) is written to the real stderr, in its order,
/// late by the length of the decode. A reader thread on a pipe would pass other lines on at
/// once, but would have to be drained before every exit and could stall a writer; JPEG XL
/// decodes taking turns costs only runs with many of them, and the turn is held only while
/// one decodes (no wait for memory or another stage happens inside).
enum LibjxlOutput {
    /// One JPEG XL decode at a time, so that what libjxl writes is attributed to it.
    private static let gate = ExclusiveGate()

    /// `body`'s result, and libjxl's lines written while it ran (without their ends), when
    /// `source` is a JPEG XL; otherwise `body` runs as it is, beside everything else.
    static func capturing<Result>(_ source: EncodedSource, _ body: () throws(ItemError) -> Result) throws(ItemError) -> Result {
        let (result, lines) = capturingLines(source) { () -> Swift.Result<Result, ItemError> in
            do throws(ItemError) { return .success(try body()) } catch { return .failure(error) }
        }
        switch result {
        case .success(let value): return value
        case .failure(let error): throw folding(lines, into: error)
        }
    }

    /// `body`'s result, and libjxl's lines written while it ran, when `source` is a JPEG XL;
    /// otherwise `body` runs as it is, beside everything else, and there are none.
    static func capturingLines<Result>(_ source: EncodedSource, _ body: () -> Result) -> (Result, [String]) {
        guard isJPEGXL(source) else { return (body(), []) }
        return gate.exclusive { capturingStandardError(body) }
    }

    /// `error` with libjxl's reasons from `lines` after its own, when its reason is libvips'
    /// bare "error JxlDecoderProcessInput" (the file's structure gave none): outermost first,
    /// each once, as libjxl prints each try's.
    static func folding(_ lines: [String], into error: ItemError) -> ItemError {
        var reasons: [String] = []
        for line in lines {
            guard let range = line.range(of: "JXL_FAILURE: ") else { continue }
            let reason = String(line[range.upperBound...]).trimmingCharacters(in: .whitespaces).cutForMessage
            if !reason.isEmpty, !reasons.contains(reason) { reasons.append(reason) }
        }
        guard error.reason.contains("jxlload") else { return error }
        guard !reasons.isEmpty else {
            // libjxl says nothing when a bare codestream (no boxes to walk) simply ends: it
            // waits for more input, and libvips reports that as the bare error.
            guard error.reason.hasSuffix("JxlDecoderProcessInput") else { return error }
            return ItemError(
                error.kind, stage: error.stage, reason: "\(error.reason) (libjxl gave no reason: the file is cut short or damaged)",
                step: error.step, underlying: error.underlyingError)
        }
        return ItemError(
            error.kind, stage: error.stage, reason: "\(error.reason) (libjxl: \(reasons.reversed().prefix(3).joined(separator: ": ")))",
            step: error.step, underlying: error.underlyingError)
    }

    /// Whether a line is one of libjxl's traces: `FILE:LINE: …` with its source file in
    /// `lib/jxl/` (`./lib/jxl/dec_frame.cc:644: JXL_FAILURE: Error in DC group`).
    static func isLibjxlLine(_ line: some StringProtocol) -> Bool {
        guard let space = line.firstIndex(of: " ") else { return false }
        let place = line[..<space]
        guard place.contains("lib/jxl/"), place.hasSuffix(":") else { return false }
        let number = place.dropLast().reversed().prefix { $0 != ":" }
        return !number.isEmpty && number.allSatisfy(\.isNumber)
    }

    /// Whether `source` starts as a JPEG XL does: a bare codestream, or the container's box.
    static func isJPEGXL(_ source: EncodedSource) -> Bool {
        source.walkingBytes { bytes in
            bytes.matches([0xFF, 0x0A], at: 0) || bytes.matches([0, 0, 0, 12] + Array("JXL ".utf8) + [0x0D, 0x0A, 0x87, 0x0A], at: 0)
        } ?? false
    }

    /// `body`'s result, with descriptor 2 pointing at a temporary file while it runs, and the
    /// libjxl lines written there; the other lines go on to the real stderr. Callers hold `gate`.
    private static func capturingStandardError<Result>(_ body: () -> Result) -> (Result, [String]) {
        fflush(nil)
        let saved = dup(STDERR_FILENO)
        // Without a descriptor to spare, or a temporary file, libjxl's lines reach stderr as before.
        guard saved >= 0 else { return (body(), []) }
        defer { close(saved) }
        guard let file = tmpfile() else { return (body(), []) }
        defer { fclose(file) }
        guard dup2(fileno(file), STDERR_FILENO) >= 0 else { return (body(), []) }
        let result = body()
        fflush(nil)
        dup2(saved, STDERR_FILENO)
        var libjxl: [String] = []
        var others: [UInt8] = []
        let written = readAll(fileno(file))
        // Line by line, each with its end; a last line without one is passed on as it is.
        var start = 0
        while start < written.count {
            let end = written[start...].firstIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? written.count
            let line = written[start..<end]
            let text = String(decoding: line, as: UTF8.self)
            if isLibjxlLine(text) {
                libjxl.append(text.trimmingCharacters(in: .newlines))
            } else {
                others += line
            }
            start = end
        }
        // Passed on as far as standard error takes it: nothing is to be done about the rest.
        _ = others.withUnsafeBytes { DescriptorWrite.all($0, to: saved) }
        return (result, libjxl)
    }

    /// The bytes of the file open at `descriptor`, from its start.
    private static func readAll(_ descriptor: Int32) -> [UInt8] {
        guard lseek(descriptor, 0, SEEK_SET) == 0 else { return [] }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        // Ends at the file's end: nothing writes to it any more.
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return bytes }
            bytes += chunk[0..<count]
        }
    }

}
