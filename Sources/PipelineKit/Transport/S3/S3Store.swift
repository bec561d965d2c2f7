import Foundation

/// S3 and the services that speak its API (MinIO, R2, moto), as a store of objects.
enum S3Store: ObjectStoreKind {
    static let scheme = "s3"
    static let displayName = "S3"
    static let maxKeyBytes = 1024
}

extension S3Location {
    /// The S3 object a neutral location names; nil for a location in another store.
    init?(_ location: ObjectLocation) {
        guard location.scheme == S3Store.scheme else { return nil }
        self.init(bucket: location.container, key: location.key)
    }

    /// The object as a location any store's caller can hold.
    var objectLocation: ObjectLocation { ObjectLocation(scheme: S3Store.scheme, container: bucket, key: key) }
}

/// A bucket's objects through one run's client.
struct S3ObjectStore: ObjectStoring {
    let client: S3Client

    func get(
        _ address: String, revalidating cached: CachedResponse?, maxBytes: Int64, isCancelled: @escaping @Sendable () -> Bool
    ) throws -> RemoteFetcher.Outcome {
        guard let location = S3Location(address) else {
            throw ItemError(.other, stage: .fetch, reason: "\(address) is not an s3://bucket/key address")
        }
        return try client.get(location, revalidating: cached, maxBytes: maxBytes, isCancelled: isCancelled)
    }

    func get(_ address: String, bytes: Range<Int64>, isCancelled: @escaping @Sendable () -> Bool) throws -> DataResponse {
        guard let location = S3Location(address) else {
            throw ItemError(.other, stage: .fetch, reason: "\(address) is not an s3://bucket/key address")
        }
        return try client.get(location, bytes: bytes, isCancelled: isCancelled)
    }

    func head(_ address: String, isCancelled: @escaping @Sendable () -> Bool) throws -> StoredObject? {
        guard let location = S3Location(address), let headers = try client.head(location, isCancelled: isCancelled) else { return nil }
        let prefix = "x-amz-meta-"
        var metadata: [String: String] = [:]
        for (name, value) in headers where name.hasPrefix(prefix) { metadata[String(name.dropFirst(prefix.count))] = value }
        return StoredObject(
            metadata: metadata, byteCount: headers["content-length"].flatMap { Int($0) } ?? 0, version: headers["etag"])
    }

    func put(
        _ address: String, body: Data, contentType: String, cacheControl: String?, metadata: [String: String],
        isCancelled: @escaping @Sendable () -> Bool
    ) throws(ItemError) -> String {
        guard let location = S3Location(address) else {
            throw ItemError(.outputPath, stage: .encode, reason: "\(address) is not an s3://bucket/key address")
        }
        var headers = ["Content-Type": contentType]
        if let cacheControl { headers["Cache-Control"] = cacheControl }
        for (name, value) in metadata { headers["x-amz-meta-\(name)"] = value }
        return try client.put(location, body: body, headers: headers, isCancelled: isCancelled)
    }
}

extension S3Access {
    /// The bucket `path` is in, for writing to it; a bad address or a client that cannot be
    /// configured is the encode stage's failure.
    func objectStore(forWriting path: String) throws(ItemError) -> S3ObjectStore {
        guard let location = S3Location(path) else {
            throw ItemError(.outputPath, stage: .encode, reason: "\(path) is not an s3://bucket/key address")
        }
        do throws(S3Configuration.Failure) {
            return S3ObjectStore(client: try client())
        } catch {
            throw ItemError(
                .writing, stage: .encode, reason: "\(S3Client.label("PutObject", location)): \(error.message)", underlying: error)
        }
    }
}

extension S3Access {
    /// The bucket `location` is in, for reading from it; a client that cannot be configured is the
    /// fetch stage's failure.
    func objectStore(forReading location: S3Location) throws(ItemError) -> S3ObjectStore {
        do throws(S3Configuration.Failure) {
            return S3ObjectStore(client: try client())
        } catch {
            throw ItemError(
                .other, stage: .fetch, reason: "\(S3Client.label("GetObject", location)): \(error.message)", underlying: error)
        }
    }
}

extension S3Error: ObjectStoreStatusError {}
