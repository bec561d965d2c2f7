import Foundation

/// The buckets outputs are written to, asked before a run: a bucket that does not exist would
/// otherwise be found at the upload of each input's file, after its fetch, decode and encode.
extension RunPlan {
    /// A problem at the path of each output whose bucket S3 says does not exist, each bucket
    /// asked once. Any other answer (a role that may not ask, no answer) leaves it to the uploads.
    static func missingBuckets(_ definition: PipelineDefinition, stores: ObjectStoreAccess) -> [PipelineFileError.Problem] {
        let written = definition.outputs.enumerated().compactMap { index, output in
            fixedBucket(of: output.path.description).map { (bucket: $0, position: output.fileIndex ?? index, output: output) }
        }
        let missing = Set(written.map(\.bucket)).filter { stores.s3.bucketExists($0) == false }
        // An output of several widths or formats is several definitions at one position: one problem.
        var reported: Set<Int> = []
        return written.filter { missing.contains($0.bucket) && reported.insert($0.position).inserted }.map { bucket, position, output in
            .init(
                path: "outputs[\(position)].path", location: output.pathLocation,
                message: "the bucket \"\(bucket)\" does not exist (S3 HeadBucket: 404): create it, or name another")
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
