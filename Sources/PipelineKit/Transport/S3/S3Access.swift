import Foundation
import Vips

/// S3 for one run: the configuration is resolved once, when first needed, so a run without
/// `s3://` inputs or outputs never looks for credentials.
final class S3Access: Sendable {
    private let settings: S3Settings
    private let environment: [String: String]
    private let fetcher: RemoteFetcher
    /// What planning asks a bucket with: one attempt, bounded by `probeTimeout`, so that a store
    /// that does not answer holds a plan seconds, not the minutes of a fetch's retries.
    private let probeFetcher: RemoteFetcher
    /// The longest a plan's question to a bucket may take.
    static let probeTimeout: Double = 10
    private let resolved = Locked<Result<S3Client, S3Configuration.Failure>?>(nil)

    /// - Parameter loader: makes the requests; by default libcurl with the file's fetch settings.
    init(definition: PipelineDefinition, environment: [String: String], loader: (any DataLoading)?) {
        self.settings = definition.s3
        self.environment = environment
        // A private endpoint's authority is named as the AWS command line reads it, first.
        let authorities = CertificateAuthorities.fromEnvironment(environment, firstReading: [CertificateAuthorities.awsFileVariable])
        self.fetcher = RemoteFetcher(
            loader: loader ?? CurlDataLoader(fetch: definition.fetch, certificateAuthorities: authorities), settings: definition.fetch)
        var probe = definition.fetch
        probe.timeout = min(probe.timeout, Self.probeTimeout)
        probe.retries = 0
        probeFetcher = RemoteFetcher(loader: loader ?? CurlDataLoader(fetch: probe, certificateAuthorities: authorities), settings: probe)
    }

    /// Whether `bucket` exists (see `S3Client.bucketExists(_:isCancelled:)`), asked once, within
    /// `probeTimeout` and until `isCancelled`; nil when the client cannot be configured, which
    /// the run reports.
    func bucketExists(_ bucket: String, isCancelled: @escaping @Sendable () -> Bool) -> Bool? {
        guard let client = try? client() else { return nil }
        return S3Client(configuration: client.configuration, fetcher: probeFetcher).bucketExists(bucket, isCancelled: isCancelled)
    }

    /// The shared credentials and config files a client would be configured from.
    var sharedFiles: [String] {
        let files = S3Configuration.sharedFiles(environment: environment)
        return [files.credentials, files.config]
    }

    /// The client, or why there is none (no credentials, a bad endpoint).
    func client() throws(S3Configuration.Failure) -> S3Client {
        let result = resolved.withLock { resolved in
            if let resolved { return resolved }
            let result = Result { () throws(S3Configuration.Failure) in
                S3Client(configuration: try S3Configuration.resolve(settings, environment: environment), fetcher: fetcher)
            }
            resolved = result
            return result
        }
        return try result.get()
    }
}
