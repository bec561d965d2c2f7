import Foundation

/// Reads back the outputs runs wrote to an object store (a `WrittenOutput` whose path is
/// `s3://…`), for a server to answer with what a run made or found up to date there, on this
/// machine or another sharing the bucket. One value serves every request: a store is configured
/// (its credentials read) when first used, as a run's stores are.
public final class StoredOutputs: Sendable {
    private let stores: ObjectStoreAccess

    /// The stores `pipeline`'s outputs are written to, with its environment and fetch settings.
    public init(pipeline: Pipeline) {
        stores = ObjectStoreAccess(definition: pipeline.definition, environment: pipeline.environment, loader: nil)
    }

    /// The stores of `stores`, a run's own.
    init(stores: ObjectStoreAccess) {
        self.stores = stores
    }

    /// Why a stored output could not be read: the store's own words.
    public struct Failure: Error, CustomStringConvertible {
        /// What went wrong, naming the object, never a credential.
        public let description: String

        /// A failure said in `description`'s words (a reader that gave up names why).
        public init(description: String) {
            self.description = description
        }

        /// The store's `error` reading `address`.
        init(_ error: any Error, reading address: String) {
            description = (error as? ItemError)?.reason ?? "\(address): \(error)"
        }
    }

    /// The bytes of `written`'s object, read whole, at most `maxBytes`, when it is the version
    /// `written` describes (the fingerprint a run kept with it, and the size); given
    /// up, between attempts or during one, once `isCancelled` turns true. Blocking: call it off
    /// the cooperative pool.
    ///
    /// Another machine sharing the bucket may put another version between a run's check and
    /// this read (a replica of another pipeline file, during a rolling update): its bytes must
    /// not go out as the version the run reported.
    ///
    /// - Throws: `Failure` when `address` is in no store this build knows, the store cannot be
    ///   configured, the object cannot be read (gone, refused, too large, unreachable, given up),
    ///   or it is another version now.
    public func read(
        _ written: WrittenOutput, maxBytes: Int64, isCancelled: @escaping @Sendable () -> Bool = { false }
    ) throws(Failure) -> Data {
        let response = try read(written.path, maxBytes: maxBytes, isCancelled: isCancelled)
        try check(response.headers, length: response.body.count, of: written)
        return response.body
    }

    /// The bytes `bytes` of `written`'s object (a ranged read), when it is the version `written`
    /// describes, as `read(_:maxBytes:isCancelled:)` checks it: for an answer sent a piece at a
    /// time, each piece checked as it is read. Blocking: call it off the cooperative pool.
    ///
    /// - Throws: `Failure` as `read(_:maxBytes:isCancelled:)` does, and when the store does not
    ///   answer with exactly those bytes.
    public func read(
        _ written: WrittenOutput, bytes: Range<Int>, isCancelled: @escaping @Sendable () -> Bool = { false }
    ) throws(Failure) -> Data {
        let store = try self.store(for: written.path)
        let response: DataResponse
        do {
            response = try store.get(written.path, bytes: Int64(bytes.lowerBound)..<Int64(bytes.upperBound), isCancelled: isCancelled)
        } catch {
            throw Failure(error, reading: written.path)
        }
        // `bytes a-b/LENGTH`: the object's whole length, which the version check compares.
        let length = response.headers["content-range"].flatMap { $0.split(separator: "/").last }.flatMap { Int($0) }
        guard response.status == 206, response.body.count == bytes.count, let length else {
            throw Failure(description: "\(written.path): the store did not answer with bytes \(bytes) of it")
        }
        try check(response.headers, length: length, of: written)
        return response.body
    }

    /// Throws unless an object whose headers are `headers` and whose whole length is `length`
    /// is the version of `written`: the fingerprint its run kept with it, its size, and the
    /// store's name for the version the run put or found (so that the pieces of one answer are
    /// of one version, even of two with one fingerprint and size).
    private func check(_ headers: [String: String], length: Int, of written: WrittenOutput) throws(Failure) {
        guard headers["x-amz-meta-\(OutputWriter.MetadataName.fingerprint)"] == written.fingerprint, length == written.byteCount,
            written.storedVersion == nil || headers["etag"] == written.storedVersion
        else {
            throw Failure(description: "\(written.path) holds another version than the run reported: another machine put it since")
        }
    }

    private func store(for address: String) throws(Failure) -> any ObjectStoring {
        guard let store = stores.store(for: address) else {
            throw Failure(description: "\(address) is not in an object store that can be read")
        }
        return store
    }

    private func read(
        _ address: String, maxBytes: Int64, isCancelled: @escaping @Sendable () -> Bool
    ) throws(Failure) -> DataResponse {
        let store = try self.store(for: address)
        let outcome: RemoteFetcher.Outcome
        do {
            outcome = try store.get(address, revalidating: nil, maxBytes: maxBytes, isCancelled: isCancelled)
        } catch {
            throw Failure(error, reading: address)
        }
        guard case .fetched(let response) = outcome else {
            throw Failure(description: "\(address) was answered as not modified, without its bytes")
        }
        return response
    }
}
