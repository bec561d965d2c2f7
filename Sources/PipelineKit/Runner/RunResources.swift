import Foundation
import Vips

/// The images steps need beside their input (overlays), loaded once for the whole run before
/// the first input, with the version of each for the journal's fingerprints.
struct RunResources: Sendable {
    private(set) var images: [URL: Result<VipsImage, ResourceError>] = [:]
    private var versions: [URL: String] = [:]
    /// The digest of each ICC file an output's encoder embeds, by path: the profile is part of
    /// the output's bytes, so a file changed in place makes its outputs again.
    private var profileVersions: [String: String] = [:]
    /// What the run's memory budget holds for the images loaded, until the run gives it back
    /// (`release(from:)`): they are held for the whole run, beside the inputs.
    private(set) var heldBytes: Int64 = 0

    /// Fetches and decodes every image `outputs`' steps name as a resource, through the same
    /// fetch, cache and decompress stages as inputs (full size: a step may scale it), but
    /// without the file's `fetch.headers`. A resource that fails fails the outputs whose steps
    /// use it, item by item, not the run. Under a memory budget, each is weighed by its header
    /// first, as an input is: one that alone would exceed the budget fails as `overMemoryBudget`,
    /// and the others take their share of it for the whole run.
    static func load(
        for outputs: [OutputDefinition], sources: SourceLoader, decompress: StageQueue,
        settings: DecompressSettings, redaction: CredentialRedaction, memory: MemoryAccountant
    ) async -> RunResources {
        // The headers are for the inputs' origins: an overlay may be anyone's (a logo's CDN).
        let sources = sources.withoutFileHeaders
        var resources = RunResources()
        let decoder = ImageDecoder(settings: settings, outputs: [])
        let urls = Set(outputs.flatMap { $0.steps.flatMap(\.resources) })
        for url in urls.sorted(by: { $0.absoluteString < $1.absoluteString }) {
            let input =
                url.isFileURL
                ? InputFile(path: url.path, displayName: url.path, subfolder: "")
                : InputFile(url: url.absoluteString, redaction: redaction)
            var version: String?
            do {
                let fetched = try await sources.load(input)
                version = fetched.version
                try await resources.hold(fetched.source, decodedBy: decoder, in: memory)
                let decoded = try await decompress.run(for: input.displayName) { try decoder.decode(fetched.source) }
                resources.images[url] = .success(try Self.withoutMetadata(decoded.image))
            } catch {
                let reason = (error as? ItemError)?.reason ?? String(describing: error)
                resources.images[url] = .failure(ResourceError(url: url, reason: reason, redaction: redaction))
            }
            resources.versions[url] = version ?? "unversioned"
        }
        // Files only: the built-in profiles' names are their version, in the encoder's identity.
        for path in Set(outputs.compactMap(\.encoder.iccProfileFile)) {
            // One that can no longer be read (a FIFO too, not waited on) fails its encodes; the
            // next run reads it again.
            let bytes = try? RegularFile.contents(of: path)
            resources.profileVersions[path] = bytes.map { "sha256:" + SHA256.hex($0) } ?? "unreadable"
        }
        return resources
    }

    /// Takes the share of the memory budget that decoding `source` whole needs, for the run;
    /// throws when it could never fit, or when the run is cancelled while it waits.
    private mutating func hold(_ source: EncodedSource, decodedBy decoder: ImageDecoder, in memory: MemoryAccountant) async throws {
        guard let budget = memory.budget, let admission = memory.admission, let estimate = decoder.memoryNeeds(of: source)?.estimate
        else { return }
        guard admission.fits(estimate) else {
            throw ItemError(
                .overMemoryBudget, stage: .decompress,
                reason: "decoding it needs about \(MemoryBudget.megabytes(estimate)), more than the run's whole memory budget: \(budget)")
        }
        guard await admission.admit(estimate) else { throw CancellationError() }
        heldBytes += estimate
    }

    /// Gives back the memory budget's share the images held.
    func release(from memory: MemoryAccountant) {
        if heldBytes > 0 { memory.admission?.release(heldBytes) }
    }

    /// `image` without the metadata `keep` names (EXIF, XMP, IPTC, the profile, text chunks) or
    /// an orientation: libvips' operations give their output the fields of every input the
    /// first lacks, so an overlay's camera and GPS position would be published with each image
    /// it is laid on that has none. Its pixels are sRGB by then, which the profile said.
    static func withoutMetadata(_ image: VipsImage) throws(VipsError) -> VipsImage {
        let fields = image.fieldNames.filter { ImageEncoder.metadataKind(of: $0) != nil || $0 == "orientation" }
        return fields.isEmpty ? image : try image.removingFields(fields)
    }

    /// What identifies the versions of the resources `output`'s steps use, and of the ICC file
    /// its encoder embeds, for its fingerprint.
    func versions(of output: OutputDefinition) -> String {
        let urls = output.steps.flatMap(\.resources)
        let steps = urls.isEmpty ? "" : "\n" + urls.map { "\($0.absoluteString)=\(versions[$0] ?? "?")" }.joined(separator: ";")
        let profile = output.encoder.iccProfile.flatMap { profileVersions[$0] }.map { "\niccProfile=\($0)" } ?? ""
        return steps + profile
    }
}
