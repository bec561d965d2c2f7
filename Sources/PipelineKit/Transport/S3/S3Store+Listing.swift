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
        let glob = S3KeyGlob(key: location.key, alternatives: alternatives, caseInsensitive: caseInsensitive)
        guard glob.hasWildcards else {
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
        var listPrefix = String(location.key.prefix { $0 != "*" && $0 != "?" && $0 != "[" && $0 != "{" && $0 != "\\" })
        // Matched whatever the case, the name the wildcard is in is matched, not listed by: only
        // the folders before it are used as written, as on disk.
        if caseInsensitive { listPrefix = listPrefix.lastIndex(of: "/").map { String(listPrefix[...$0]) } ?? "" }
        let listed = "s3://\(location.bucket)/\(listPrefix)"
        let objects: [S3Object]
        do {
            guard let stores else { throw S3Configuration.Failure(message: "S3 is not available to this enumeration") }
            objects = try stores.s3.client().list(bucket: location.bucket, prefix: listPrefix, isCancelled: stores.stopsPlanning)
        } catch {
            let reason =
                (error as? ItemError)?.reason ?? (error as? S3Configuration.Failure)?.message
                ?? (error is CancellationError ? "stopped" : String(describing: error))
            result.problems.append(.init(path: place, location: nil, message: "cannot list \(pattern): \(reason)"))
            return listed
        }
        var found = 0
        for object in objects.sorted(by: { $0.key < $1.key }) {
            guard let relative = glob.matchedParts(of: object.key) else { continue }
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

/// The key of an `s3://` input glob, matched as a listing matches it: below the folder before
/// its first wildcard, part by part with the file system's rules, any brace alternative.
struct S3KeyGlob {
    /// The key's folder before its first wildcard, with a trailing `/` (empty at the bucket's root).
    private let folderPrefix: String
    /// Each alternative's parts from the first wildcard on.
    private let globs: [ArraySlice<String>]
    /// Whether the key holds a wildcard or braces: one without names a single object.
    let hasWildcards: Bool
    private let caseInsensitive: Bool

    /// The glob of `key`, spelled out as its brace `alternatives` (`InputEnumerator.braceAlternatives`).
    init(key: String, alternatives: [String], caseInsensitive: Bool) {
        let split = alternatives.map { $0.split(separator: "/", omittingEmptySubsequences: false).map(String.init) }
        hasWildcards = alternatives.count > 1 || split[0].contains(where: InputEnumerator.isGlob)
        let firstGlob = InputEnumerator.rootCount(key.split(separator: "/", omittingEmptySubsequences: false).map(String.init))
        let folder = split[0][..<min(firstGlob, split[0].count)].joined(separator: "/")
        folderPrefix = folder.isEmpty ? "" : folder + "/"
        globs = split.map { $0[min(firstGlob, $0.count)...] }
        self.caseInsensitive = caseInsensitive
    }

    /// The glob of the `s3://` input `pattern`, when it is one, for its bucket.
    init?(pattern: String, caseInsensitive: Bool) {
        guard let location = S3Location(pattern), let alternatives = InputEnumerator.braceAlternatives(location.key) else { return nil }
        self.init(key: location.key, alternatives: alternatives, caseInsensitive: caseInsensitive)
        guard hasWildcards else { return nil }
    }

    /// The parts of `key` below the glob's folder when the glob takes it in; nil otherwise, and
    /// for a key ending in `/` (a folder marker, not an image).
    func matchedParts(of key: String) -> [String]? {
        guard key.hasPrefix(folderPrefix) else { return nil }
        let relative = key.dropFirst(folderPrefix.count).split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard relative.last?.isEmpty == false,
            globs.contains(where: { InputEnumerator.matches($0, relative[...], caseInsensitive: caseInsensitive) })
        else { return nil }
        return relative
    }
}
