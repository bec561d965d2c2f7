#if Server
import Dispatch
import Hummingbird
import PipelineKit

/// Outputs written to an object store (`"path": "s3://bucket/…"`): a run makes the file and puts
/// it in the bucket, or finds it there up to date (by the fingerprint kept with the object, as
/// a batch run does), and the answer is read back from the bucket. Replicas that share the
/// bucket so make each file once between them.
extension OutputResponder {
    /// The bytes of `written`, an object in a store, read whole on a thread of their own (the
    /// read blocks), and given up at `deadline`. A store that cannot give them is a passing
    /// state: another request finds the object again, or makes it.
    func storedBytes(of written: WrittenOutput, deadline: AnswerDeadline, context: some RequestContext) async throws(ServeError)
        -> ByteBuffer
    {
        let stored = self.stored
        let read = await runBlocking(on: .global(qos: .userInitiated)) {
            Result { () throws(StoredOutputs.Failure) in
                try stored.read(written, maxBytes: Self.largestFile, isCancelled: { deadline.hasPassed })
            }
        }
        switch read {
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
