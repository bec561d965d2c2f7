import Foundation

/// S3's listing: an `s3://bucket/key` names one object, a glob in the key the objects
/// ListObjectsV2 finds that it matches.
extension InputEnumerator {
    /// Adds an `s3://` object, or the objects a glob matches: ListObjectsV2 with the key's
    /// literal part before its first wildcard as the prefix, then the glob matched on each key
    /// with the same rules as on the file system. Returns what it listed.
    func listS3(_ pattern: String, at place: String, into result: inout Result<some InputSink>) -> String? {
        guard let location = S3Location(pattern) else {
            result.problems.append(.init(path: place, location: nil, message: "\"\(pattern)\" is not an s3://bucket/key address"))
            return nil
        }
        guard let alternatives = Self.braceAlternatives(location.key) else {
            result.problems.append(.init(path: place, location: nil, message: Self.tooManyAlternatives(pattern)))
            return nil
        }
        let split = alternatives.map { $0.split(separator: "/", omittingEmptySubsequences: false).map(String.init) }
        guard alternatives.count > 1 || split[0].contains(where: Self.isGlob) else {
            guard !location.key.isEmpty, !location.key.hasSuffix("/") else {
                result.problems.append(
                    .init(
                        path: place, location: nil,
                        message:
                            "\(pattern) names a bucket or a folder, not an object: a glob such as \(pattern.hasSuffix("/") ? pattern : pattern + "/")**/*.jpg reads what is in it"
                    ))
                return nil
            }
            result.add(InputFile(s3: location))
            return nil
        }
        let firstGlob = Self.rootCount(location.key.split(separator: "/", omittingEmptySubsequences: false).map(String.init))
        let folder = split[0][..<firstGlob].joined(separator: "/")
        let folderPrefix = folder.isEmpty ? "" : folder + "/"
        let listPrefix = String(location.key.prefix { $0 != "*" && $0 != "?" && $0 != "[" && $0 != "{" })
        let listed = "s3://\(location.bucket)/\(listPrefix)"
        let objects: [S3Object]
        do {
            guard let stores else { throw S3Configuration.Failure(message: "S3 is not available to this enumeration") }
            objects = try stores.s3.client().list(bucket: location.bucket, prefix: listPrefix)
        } catch {
            let reason = (error as? ItemError)?.reason ?? (error as? S3Configuration.Failure)?.message ?? String(describing: error)
            result.problems.append(.init(path: place, location: nil, message: "cannot list \(pattern): \(reason)"))
            return listed
        }
        let globs = split.map { $0[firstGlob...] }
        var found = 0
        for object in objects.sorted(by: { $0.key < $1.key }) where object.key.hasPrefix(folderPrefix) {
            let relative = object.key.dropFirst(folderPrefix.count).split(separator: "/", omittingEmptySubsequences: false).map(String.init)
            // A key ending in "/" is a folder marker, not an image.
            guard relative.last?.isEmpty == false,
                globs.contains(where: { Self.matches($0, relative[...], caseInsensitive: caseInsensitive) })
            else { continue }
            result.add(
                InputFile(
                    s3: S3Location(bucket: location.bucket, key: object.key),
                    subfolder: relative.dropLast().joined(separator: "/"), etag: object.etag, byteCount: object.size))
            found += 1
        }
        if found == 0 {
            result.warnings.append("input \"\(pattern)\" matches no objects in \(listed)\(emptyHint(pattern, foldedMatches: 0))")
        }
        return listed
    }
}
