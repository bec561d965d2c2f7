import Foundation

extension ImageManifest {
    /// What a shard's manifest (`manifest.shard-2-of-4.json`) says of the run that wrote it, so
    /// that `pipeline merge-manifests` joins only manifests that together are what one run over
    /// every input would write: the shard, digests of the names of its inputs and of the
    /// settings its entries were made with, and whether it went through every input. The joined
    /// manifest has none.
    public struct ShardRun: Codable, Sendable, Equatable {
        /// The shard's index, from 0.
        public var index: Int
        /// How many shards the run had.
        public var count: Int
        /// A digest of the names of the shard's inputs, as the run found them.
        public var inputs: String
        /// A digest of the settings the entries were made with.
        public var settings: String
        /// False when the run was stopped before it had been through every input.
        public var finished: Bool
        /// A digest of the versions of the shard's inputs as the run began (`versionsDigest(of:)`);
        /// nil in the manifests of versions before it.
        public var versions: String?

        /// The record of `shard`, whose inputs are `inputs` at `versions`, of `definition`.
        init(shard: Shard, inputs: InputsDigest, versions: InputsDigest?, definition: PipelineDefinition, finished: Bool = true) {
            index = shard.index
            count = shard.count
            self.inputs = inputs.text
            settings = Self.settingsDigest(of: definition)
            self.finished = finished
            self.versions = versions?.text
        }

        /// The input names of `plan`'s sources (a shard's, for a sharded run), as a manifest
        /// names them, refused ones left out.
        static func inputsDigest(of plan: RunPlan) -> InputsDigest {
            var digest = InputsDigest()
            for item in plan.items {
                for listing in item.listings where listing.refusal == nil { digest.add(listing.input.displayName) }
            }
            return digest
        }

        /// The names of `plan`'s sources with their versions as the journal takes them: a local
        /// file's size, time and file (so a file replaced with its old time kept, as `rsync -a`
        /// does it, is another), an object's ETag from its listing; a URL's name alone.
        static func versionsDigest(of plan: RunPlan) -> InputsDigest {
            var digest = InputsDigest()
            for item in plan.items {
                for listing in item.listings where listing.refusal == nil {
                    let input = listing.input
                    digest.add(named(input, stamp: input.isRemote ? nil : FileStamp(path: input.path)))
                }
            }
            return digest
        }

        /// `input`'s name and version, as `versionsDigest(of:)` adds it; `stamp` is a local
        /// input's file as it is now.
        static func named(_ input: InputFile, stamp: FileStamp?) -> String {
            let version = input.isRemote ? input.listedVersion : stamp?.version
            return input.displayName + "\u{0}" + (version ?? "-")
        }

        /// A digest of input names in any order, made one name at a time: their count, and the
        /// sum of their hashes. A shard of many inputs is read once, with nothing held.
        struct InputsDigest: Equatable {
            private var count = 0
            private var sum: UInt64 = 0

            mutating func add(_ name: String) {
                count += 1
                sum &+= FNV1a.hash(Data(name.utf8))
            }

            var text: String { "\(count)-" + String(format: "%016llx", sum) }
        }

        /// The digest of what decides a manifest's entries: what the journal fingerprints each
        /// output's files by (the decode settings, steps, encoder, tile pyramid), each output's
        /// name, path template and placeholders with their settings, and where the manifest's
        /// URLs start. Not the pipeline's name, its inputs (the other digest) or its stage
        /// widths, which change no entry.
        static func settingsDigest(of definition: PipelineDefinition) -> String {
            var lines = [OutputJournal.Fingerprints(definition: definition).settings]
            for output in definition.outputs {
                lines.append(
                    [output.name, output.path.text, output.placeholderSettings.recipe(for: output.placeholders)].joined(separator: "\t"))
            }
            if let manifest = definition.manifest {
                // The root relative to the manifest's folder: shards may run in other folders.
                let folder = manifest.file.deletingLastPathComponent().standardizedFileURL.pathComponents
                lines.append("urls \(manifest.urlPrefix) \(ManifestWriter.relativePath(manifest.urlRoot.path, to: folder))")
            }
            return digest(lines)
        }

        private static func digest(_ lines: [String]) -> String {
            String(format: "%016llx", FNV1a.hash(Data(lines.joined(separator: "\n").utf8)))
        }
    }
}
