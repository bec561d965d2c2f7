import Foundation

/// The buckets outputs are written to, asked before a run: a bucket that does not exist, or no
/// credentials to write with, would otherwise be found at the upload of each input's file, after
/// its fetch, decode and encode.
extension RunPlan {
    /// A problem at the path of each output in a bucket when no S3 client can be configured (no
    /// credentials: the message says where they were looked for), else at the path of each
    /// output whose bucket S3 says does not exist, each bucket asked once. Any other answer (a
    /// role that may not ask, no answer) leaves it to the uploads.
    static func outputBucketProblems(_ definition: PipelineDefinition, stores: ObjectStoreAccess) -> [PipelineFileError.Problem] {
        let inBuckets = definition.outputs.enumerated().filter { ObjectStores.isObject($0.element.path.description) }
        guard !inBuckets.isEmpty else { return [] }
        // An output of several widths or formats is several definitions at one position: one problem.
        var reported: Set<Int> = []
        let client: S3Client
        do {
            client = try stores.s3.client()
        } catch {
            return inBuckets.filter { reported.insert($0.element.fileIndex ?? $0.offset).inserted }.map { index, output in
                .init(path: "outputs[\(output.fileIndex ?? index)].path", location: output.pathLocation, message: "\(error)")
            }
        }
        let written = inBuckets.compactMap { index, output in
            fixedBucket(of: output.path.description).map { (bucket: $0, position: output.fileIndex ?? index, output: output) }
        }
        let missing = Set(written.map(\.bucket)).filter { stores.s3.bucketExists($0, isCancelled: stores.stopsPlanning) == false }
        // A signal while a bucket is asked ends the question, and the planning, as it ends a listing.
        if stores.stopsPlanning() { return [.init(path: "", location: nil, message: "stopped while the output buckets were asked for")] }
        // A custom endpoint may be another server than the one meant: named, as the four places
        // it may come from (the file, two variables, the profile) are not.
        let asked = client.shownEndpoint.map { " at \($0)" } ?? ""
        return written.filter { missing.contains($0.bucket) && reported.insert($0.position).inserted }.map { bucket, position, output in
            .init(
                path: "outputs[\(position)].path", location: output.pathLocation,
                message: "the bucket \"\(bucket)\" does not exist\(asked) (S3 HeadBucket: 404): create it, or name another")
        }
    }

    /// The bucket of an `s3://` path whose bucket is written out, not made of placeholders.
    private static func fixedBucket(of path: String) -> String? {
        guard path.hasPrefix("s3://") else { return nil }
        let bucket = path.dropFirst("s3://".count).prefix { $0 != "/" }
        guard !bucket.isEmpty, !bucket.contains("{") else { return nil }
        return String(bucket)
    }
}
