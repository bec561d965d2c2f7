import Foundation

/// The buckets outputs are written to, asked before a run: a bucket that does not exist would
/// otherwise be found at the upload of each input's file, after its fetch, decode and encode.
extension RunPlan {
    /// A problem at the path of each output whose bucket S3 says does not exist, each bucket
    /// asked once. Any other answer (a role that may not ask, no answer) leaves it to the uploads.
    static func missingBuckets(_ definition: PipelineDefinition, stores: ObjectStoreAccess) -> [PipelineFileError.Problem] {
        var asked: [String: Bool?] = [:]
        var problems: [PipelineFileError.Problem] = []
        var reported: Set<Int> = []
        for (index, output) in definition.outputs.enumerated() {
            let position = output.fileIndex ?? index
            guard !reported.contains(position), let bucket = fixedBucket(of: output.path.description) else { continue }
            let exists: Bool?
            if let answer = asked[bucket] {
                exists = answer
            } else {
                exists = stores.s3.bucketExists(bucket)
                asked[bucket] = .some(exists)
            }
            guard exists == false else { continue }
            reported.insert(position)
            problems.append(
                .init(
                    path: "outputs[\(position)].path", location: output.pathLocation,
                    message: "the bucket \"\(bucket)\" does not exist (S3 HeadBucket: 404): create it, or name another"))
        }
        return problems
    }

    /// The bucket of an `s3://` path whose bucket is written out, not made of placeholders.
    private static func fixedBucket(of path: String) -> String? {
        guard path.hasPrefix("s3://") else { return nil }
        let bucket = path.dropFirst("s3://".count).prefix { $0 != "/" }
        guard !bucket.isEmpty, !bucket.contains("{") else { return nil }
        return String(bucket)
    }
}
