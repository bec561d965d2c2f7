import Foundation

extension RunPlan {
    /// The files a run of `definition` (read from `fileName`) reads besides its inputs, which
    /// nothing it writes may land on: the pipeline file, the list files among its inputs
    /// (`listFiles`, absolute), the local files its steps load, the ICC profiles its encoders
    /// embed, and S3's shared credentials and config files.
    static func readFiles(_ definition: PipelineDefinition, fileName: String, listFiles: [String], s3: S3Access) -> [ReadFile] {
        var reads: [ReadFile] = []
        if let file = definition.sourceFile {
            reads.append(ReadFile(what: "the pipeline file \(fileName)", path: file.path))
        }
        reads += listFiles.map { ReadFile(what: "the input list \($0)", path: $0) }
        for output in definition.outputs {
            for step in output.steps {
                for resource in step.resources where resource.isFileURL {
                    let what = "the file \(resource.path) that output \"\(output.name)\"'s \(type(of: step).name) step reads"
                    reads.append(ReadFile(what: what, path: resource.path))
                }
            }
            // A built-in profile is a name; a file's is an absolute path by now.
            if let profile = output.encoder.iccProfile, profile.hasPrefix("/") {
                reads.append(ReadFile(what: "the ICC profile \(profile) that output \"\(output.name)\" embeds", path: profile))
            }
        }
        reads += s3.sharedFiles.map { ReadFile(what: "the S3 credentials file \($0)", path: $0) }
        return reads
    }
}
