#if Server
import Foundation
import Hummingbird
import PipelineKit

/// Outputs whose path has `{hash}`: their files are named by the SHA-256 of their bytes, so a URL
/// that names the hash (`?hash=`) always means the same bytes and may be cached for good.
extension OutputResponder {
    /// The `Cache-Control` of an answer to a URL that names its file's hash: kept a year, the
    /// longest lifetime caches are asked to keep anything.
    static let immutable = "public, max-age=\(aYear), immutable"
    /// A year in seconds.
    static let aYear = 31_536_000

    /// The file of a hashed output, its bytes sent as hashed: a small one (or an object) read
    /// whole and hashed, a larger one on the disk hashed and sent a piece at a time from the one
    /// descriptor, so that clients taking it at once do not each hold it whole. A request that
    /// names a hash gets the file only when its bytes still have that hash (404 otherwise:
    /// another version has replaced it). A request without one gets the file with
    /// `Content-Location`, the URL that names its width, format and hash.
    func hashedResponse(
        _ written: WrittenOutput, stamp: FileStamp?, length: Int, for wanted: OutputRequest, request: Request, headers: HTTPFields,
        deadline: AnswerDeadline, context: some RequestContext
    ) async throws(ServeError) -> Response {
        let hash: String
        let body: ResponseBody
        if written.byteCount <= WarmBodies.largestFile || ObjectStores.isObject(written.path) {
            let bytes = try await self.body(of: written, stamp: stamp, deadline: deadline, context: context)
            hash = String(SHA256.hex(Data(bytes.readableBytesView)).prefix(length))
            body = .inPieces(bytes)
        } else {
            let opened = try await Self.opened(written, stamp: stamp)
            let bodies = self.bodies
            let full = await runBlocking(on: .global(qos: .userInitiated)) { bodies.sha256(of: opened) }
            guard let full else {
                throw ServeError.tryAgain("the file changed while it was being answered; try again")
            }
            hash = String(full.prefix(length))
            body = .streamed(opened)
        }
        if let asked = wanted.hash, asked != hash {
            throw ServeError(
                404,
                "no file of output \(wanted.output) for input \(wanted.input) has hash \(asked) now: its bytes changed, or the hash is of "
                    + "another width or format than the URL asks for (the URL without hash says which, in Content-Location)")
        }
        var headers = headers
        if wanted.hash == nil {
            headers[.contentLocation] = Self.hashedURL(
                of: request, width: wanted.listedWidth(naming: written), format: written.format ?? wanted.format, hash: hash)
        }
        if let tag = headers[.eTag], Self.matches(request.headers[.ifNoneMatch], tag) {
            return Response(status: .notModified, headers: headers)
        }
        return Response(status: .ok, headers: headers, body: body)
    }

    /// The request's path (with its signature, as sent) and query, with the width (of the
    /// output's list, when it has one), format and hash of the file answered in place of any the
    /// query had: the one URL of these bytes.
    static func hashedURL(of request: Request, width: String?, format: EncoderSettings.Format, hash: String) -> String {
        let replaced: Set<String> = ["width", "format", "hash"]
        let kept = (request.uri.query ?? "").split(separator: "&").filter { parameter in
            let name = parameter.prefix { $0 != "=" }
            return !replaced.contains(name.percentDecoded ?? String(name))
        }
        let query = kept.map(String.init) + (width.map { ["width=\($0)"] } ?? []) + ["format=\(format.rawValue)", "hash=\(hash)"]
        return request.uri.path + "?" + query.joined(separator: "&")
    }
}
#endif
