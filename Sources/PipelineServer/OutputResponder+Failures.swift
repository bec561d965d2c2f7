#if Server
import Foundation
import PipelineKit

extension OutputResponder {
    /// The refusal when every lane is busy and the queue is full (`InputMaker.Full`).
    static let busy = ServeError.tryAgain("every lane is busy and the queue is full; try again")
    /// The refusal of a request cut off by the server stopping past its drain timeout, or at a
    /// second Ctrl-C.
    static let stopping = ServeError(503, "the server is stopping")

    /// The refusal for an input that could not be made (of `output`, when one failed alone) or,
    /// by `/info`, read (`doing`): the status its kind calls for, and a reason that names the
    /// input as the URL did (`name`), never by its path on the server. An input that changed while
    /// it was read is a passing state: 503 with `Retry-After`. A failure of the server itself
    /// says which output, and no more, with the whole error for the log: storing its files (on
    /// disk, or in a bucket that refuses them) is 500, as is loading an image a step reads (named
    /// by its file name), and reaching the bucket it stores them in, a passing state, 503.
    static func refusal(
        for error: ItemError, output: String? = nil, of input: InputFile, as name: String, doing verb: String = "make"
    ) -> ServeError {
        if error.kind == .changed {
            return .tryAgain("\(error.stage): \(name) changed while it was being read; try again")
        }
        // A file gone since the inputs were listed is a passing state, not an image that cannot
        // be read: it is being replaced (moved away and back), or the next listing drops it and
        // the name is 404. No fallback stands in, and nothing caches a 404 for it meanwhile.
        if error.stage == .fetch, error.kind == .unreadable, (error.underlyingError as? POSIXError)?.code == .ENOENT {
            return .tryAgain("\(error.stage): \(name) is not there now; try again")
        }
        let what = output.map { "output \($0) of \(name)" } ?? name
        if error.stage == .encode, error.kind == .network {
            return .tryAgain("\(error.stage): the server could not store \(what); try again", cause: error.reason)
        }
        // An image a step reads beside the input (an overlay) is the server's to have: the input
        // is not at fault, and no fallback stands in for it.
        if error.underlyingError is ResourceError {
            let reason = naming(error.reason, input: input, as: name)
            return ServeError(500, "\(error.stage): the server could not \(verb) \(what): \(reason)", cause: error.reason)
        }
        // Its file made, and not put in place (on disk, where a folder may stand in its way, or
        // in a bucket that refused it): the image is not at fault, nor the encoder.
        if error.kind == .writing || error.kind == .outputPath {
            return ServeError(500, "\(error.stage): the server could not store \(what)", cause: error.reason)
        }
        let status = status(for: error.kind)
        guard status != 500 else {
            return ServeError(500, "\(error.stage): the server could not \(verb) \(what)", cause: error.reason)
        }
        let reason = naming(error.reason, input: input, as: name)
        return ServeError(status, "\(error.stage): " + (reason.contains(name) ? reason : "\(name): \(reason)"))
    }

    /// The status for an input a run refused or could not make: 413 past a size limit, 422 for
    /// what cannot be read as an image or made from it, 502 for a remote input that could not be
    /// fetched, 503 for one that changed while it was read, 500 only for what the server itself
    /// could not do (write its files; `refusal` answers a bucket out of reach 503).
    static func status(for kind: ItemError.Kind) -> Int {
        switch kind {
        case .tooLarge, .tooManyPixels, .overMemoryBudget: 413
        case .refused, .unreadable, .unsupportedFormat, .undecodable, .timedOut, .processing, .encoding: 422
        case .network, .httpStatus: 502
        case .changed: 503
        default: 500
        }
    }

    /// `reason` with every spelling of the input (its URL, its path, its name in reports), and
    /// the paths it is read through (a descriptor's, libvips' temporary files'), replaced by
    /// `name`; any other absolute path (an overlay a step reads) or object's URL by its file name
    /// alone; and no bucket or key spelled out, as S3's reasons add them.
    static func naming(_ reason: String, input: InputFile, as name: String) -> String {
        var text = reason
        // The longest first: the path ends with the report's name.
        for spelling in [input.url, input.path, input.displayName].compactMap({ $0 }).filter({ !$0.isEmpty && $0 != name })
            .sorted(by: { $0.count > $1.count })
        {
            text = text.replacingOccurrences(of: spelling, with: name)
        }
        text = text.replacingOccurrences(of: #" ?\(bucket "[^"]*", (?:key|prefix) "[^"]*"\)"#, with: "", options: .regularExpression)
        if let object = try? NSRegularExpression(pattern: #"s3://[^\s'"(),]+"#) {
            for match in object.matches(in: text, range: NSRange(text.startIndex..., in: text)).reversed() {
                guard let range = Range(match.range, in: text) else { continue }
                text.replaceSubrange(range, with: (String(text[range]) as NSString).lastPathComponent)
            }
        }
        // A path from the root with two parts or more (`/proc/self/fd/7`, `/tmp/vips-0.v`), not
        // preceded by a word character (so `image/png` and `1/2` are left alone).
        guard let absolutePath = try? NSRegularExpression(pattern: #"(?<![\w./])/(?:[^\s/:'"(),]+/)+[^\s:'"(),]*"#) else { return text }
        // Backwards, so that each range still holds its path when the ones after it are replaced.
        for match in absolutePath.matches(in: text, range: NSRange(text.startIndex..., in: text)).reversed() {
            guard let range = Range(match.range, in: text) else { continue }
            let path = String(text[range])
            let fileName = (path as NSString).lastPathComponent
            let readsTheInput = path.hasPrefix("/proc/") || fileName.hasPrefix("vips-")
            text.replaceSubrange(range, with: readsTheInput || fileName.isEmpty ? name : fileName)
        }
        return text
    }
}
#endif
