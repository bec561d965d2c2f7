import Foundation

/// Inputs on this machine's file systems: a path names one file, a glob the files a walk finds
/// (`InputEnumerator+LocalFiles.swift`). A file is read where it lies, never cached, and
/// versioned by what `stat` says of it when the decoder pins it. `watch` listens to the folder
/// before a glob's first wildcard, or to the file named.
enum LocalFiles: InputSource {
    /// Every address no source with a scheme claims; `InputSources` asks this source last.
    static func claims(_ address: String) -> Bool { true }

    static func list(
        _ address: String, at place: String, by enumerator: InputEnumerator, into result: inout InputEnumerator.Result<some InputSink>
    ) -> InputEnumerator.Looked {
        enumerator.listLocal(address, at: place, into: &result)
    }

    static let isCached = false
    static let keepsFreshForMaxAge = false

    static func fetch(
        _ input: InputFile, revalidating cached: CachedResponse?, through transports: InputTransports,
        isCancelled: @escaping @Sendable () -> Bool
    ) throws -> SourceFetch {
        .inPlace(try transports.files.fetch(input))
    }

    /// One target per alternative of the address's brace sets: the file, or the glob from its
    /// folder before the first wildcard. None for an address with a scheme no source reads.
    static func watchTargets(_ address: String, base: String) -> [WatchScope.Target] {
        guard InputSources.unsupportedScheme(address) == nil else { return [] }
        let absolute = WatchScope.absolute(address, base: base)
        let alternatives = InputEnumerator.braceAlternatives(absolute) ?? [absolute]
        return alternatives.map { alternative in
            let components = alternative.split(separator: "/").map(String.init)
            guard let firstGlob = components.firstIndex(where: InputEnumerator.isGlob) else {
                return .file(WatchScope.absolute(alternative, base: base))
            }
            return .glob(root: "/" + components[..<firstGlob].joined(separator: "/"), components: Array(components[firstGlob...]))
        }
    }
}
