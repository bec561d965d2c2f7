#if Server
import Dispatch
import Foundation
import Hummingbird
import PipelineKit

/// Outputs written to an object store (`"path": "s3://bucket/…"`): a run makes the file and puts
/// it in the bucket, or finds it there up to date (by the fingerprint kept with the object, as
/// a batch run does), and the answer is read back from the bucket. Replicas that share the
/// bucket so make each file once between them.
extension OutputResponder {
    /// The bytes of `written`, an object in a store, read whole (`storedRead`).
    func storedBytes(of written: WrittenOutput, deadline: AnswerDeadline, context: some RequestContext) async throws(ServeError)
        -> ByteBuffer
    {
        try await storedRead(of: written, deadline: deadline, context: context) { stored, isCancelled throws(StoredOutputs.Failure) in
            try stored.read(written, maxBytes: Self.largestFile, isCancelled: isCancelled)
        }
    }

    /// The bytes of one ranged read of an object: a store's round trip is far slower than a
    /// disk's read, and a piece this large keeps their number small while clients taking one
    /// object at once hold a piece each, not the object.
    static let storedPieceBytes = 4 << 20

    /// The body of `written`, an object larger than a piece, sent by ranged reads: the first
    /// read (and its check that the object is the version the run reported) before the answer
    /// starts, given up at `deadline`, so that a store that cannot give it is a 503; each next
    /// piece checked as it is read, and a version put since ending the answer short, so that
    /// the client cannot take two versions' bytes for one.
    func storedInPieces(_ written: WrittenOutput, deadline: AnswerDeadline, context: some RequestContext) async throws(ServeError)
        -> ResponseBody
    {
        let size = written.byteCount
        let pieceBytes = Self.storedPieceBytes
        let first = try await storedRead(of: written, deadline: deadline, context: context) {
            stored, isCancelled throws(StoredOutputs.Failure) in
            try stored.read(written, bytes: 0..<pieceBytes, isCancelled: isCancelled)
        }
        let (stored, logger, timeout) = (self.stored, context.logger, self.timeout)
        return ResponseBody(contentLength: size) { writer in
            var piece = first
            var offset = 0
            while true {
                try await writer.writeInPieces(piece)
                offset += piece.readableBytes
                guard offset < size else { break }
                let range = offset..<min(offset + pieceBytes, size)
                // Given up when the answer is (its connection closed past the drain timeout),
                // or when the bucket takes longer than serve.timeout: a piece that never comes
                // must not hold the answer, and the server's stop, open.
                let given = CancellationFlag()
                let pieceDeadline = AnswerDeadline(seconds: timeout)
                let read = await withTaskCancellationHandler {
                    await runBlocking(on: .global(qos: .userInitiated)) {
                        Result { () throws(StoredOutputs.Failure) in
                            try stored.read(written, bytes: range, isCancelled: { given.isSet || pieceDeadline.hasPassed })
                        }
                    }
                } onCancel: {
                    given.set()
                }
                switch read {
                case .success(let bytes):
                    piece = ByteBuffer(bytes: bytes)
                case .failure(var failure):
                    // Given up here: why is ours to say, not the reader's (a cancellation).
                    if given.isSet {
                        failure = .init(description: "\(written.path): the server stopped before the rest was read")
                    } else if pieceDeadline.hasPassed {
                        failure = .init(
                            description:
                                "\(written.path): the next piece did not come within serve.timeout (\(Units.text(seconds: timeout)))")
                    }
                    logger.warning("a stored file could not be read to its end", metadata: ["reason": "\(failure.description)"])
                    throw failure
                }
            }
            try await writer.finish(nil)
        }
    }

    /// What `read` gives on a thread of its own (a store's read blocks), given up at `deadline`.
    /// A store that cannot give it is a passing state: another request finds the object again,
    /// or makes it.
    private func storedRead(
        of written: WrittenOutput, deadline: AnswerDeadline, context: some RequestContext,
        _ read: @escaping @Sendable (StoredOutputs, _ isCancelled: @escaping @Sendable () -> Bool) throws(StoredOutputs.Failure) -> Data
    ) async throws(ServeError) -> ByteBuffer {
        let stored = self.stored
        let result = await runBlocking(on: .global(qos: .userInitiated)) {
            Result { () throws(StoredOutputs.Failure) in try read(stored, { deadline.hasPassed }) }
        }
        switch result {
        case .success(let bytes):
            return ByteBuffer(bytes: bytes)
        case .failure where deadline.hasPassed:
            throw deadline.refusal
        case .failure(let failure):
            context.logger.warning("a stored file could not be read", metadata: ["reason": "\(failure.description)"])
            throw ServeError.tryAgain("the stored file could not be read; try again")
        }
    }
}
#endif
