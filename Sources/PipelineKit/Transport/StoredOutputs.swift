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
        guard response.headers["x-amz-meta-\(OutputWriter.MetadataName.fingerprint)"] == written.fingerprint,
            response.body.count == written.byteCount
        else {
            throw Failure(description: "\(written.path) holds another version than the run reported: another machine put it since")
        }
        return response.body
    }

    private func read(
        _ address: String, maxBytes: Int64, isCancelled: @escaping @Sendable () -> Bool
    ) throws(Failure) -> DataResponse {
        guard let store = stores.store(for: address) else {
            throw Failure(description: "\(address) is not in an object store that can be read")
        }
        let outcome: RemoteFetcher.Outcome
        do {
            outcome = try store.get(address, revalidating: nil, maxBytes: maxBytes, isCancelled: isCancelled)
        } catch let error as ItemError {
            throw Failure(description: error.reason)
        } catch {
            throw Failure(description: "\(address): \(error)")
        }
        guard case .fetched(let response) = outcome else {
            throw Failure(description: "\(address) was answered as not modified, without its bytes")
        }
        return response
    }
}
