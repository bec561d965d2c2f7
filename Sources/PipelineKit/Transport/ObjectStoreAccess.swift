/// The object stores of one run, each configured when first used, so a run that reads and writes
/// only files never looks for a store's credentials. Planning and the runner hold this, not a
/// store's own access.
final class ObjectStoreAccess: Sendable {
    /// S3's access: listings, fetches and writes of `s3://` addresses.
    let s3: S3Access

    /// Whether planning was asked to stop (`Pipeline.stopsPlanning`): a listing then ends.
    let stopsPlanning: @Sendable () -> Bool

    /// - Parameters:
    ///   - loader: makes the requests; by default libcurl with the file's fetch settings.
    ///   - stopsPlanning: asked between and within a listing's requests.
    init(
        definition: PipelineDefinition, environment: [String: String], loader: (any DataLoading)?,
        stopsPlanning: @escaping @Sendable () -> Bool = { false }
    ) {
        s3 = S3Access(definition: definition, environment: environment, loader: loader)
        self.stopsPlanning = stopsPlanning
    }

    /// The store that keeps `address`, configured; nil for a local path or a URL, or when the
    /// store cannot be configured (the write that follows says why).
    func store(for address: String) -> (any ObjectStoring)? {
        guard S3Location(address) != nil, let client = try? s3.client() else { return nil }
        return S3ObjectStore(client: client)
    }

    /// The store that keeps `address`, for writing to it; why there is none (a bad address, a
    /// store that cannot be configured) is the encode stage's failure.
    func store(forWriting address: String) throws(ItemError) -> any ObjectStoring {
        try s3.objectStore(forWriting: address)
    }

    /// The store that keeps the input at `address`, for reading from it; nil for a URL or a
    /// local path. A store that cannot be configured is the fetch stage's failure.
    func store(forReading address: String) throws(ItemError) -> (any ObjectStoring)? {
        guard let location = S3Location(address) else { return nil }
        return try s3.objectStore(forReading: location)
    }

    /// The files a store would read its configuration from, each with what it is, so that no
    /// output may be written over one.
    var configurationFiles: [(what: String, path: String)] {
        s3.sharedFiles.map { ("the S3 credentials file \($0)", $0) }
    }
}
