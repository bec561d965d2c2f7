import Foundation
import Vips

/// What decides whether a recorded output is still the one the run would make.
extension OutputJournal {
    /// The fingerprint of the output at `index` in the definition made from an input at
    /// `version`: everything that changes its pixels or bytes. `shared` is what the outputs of
    /// an input that only some are made for share (`sharedPart(applicable:)`).
    func fingerprint(version: String, output index: Int, shared: String? = nil) -> String {
        fingerprints.fingerprint(version: version, output: index, shared: shared)
    }

    /// What the outputs of an input for which only the outputs at `applicable` are made share,
    /// for `fingerprint(version:output:shared:)`; nil for all.
    func sharedPart(applicable: Set<Int>?) -> String? {
        applicable.map(fingerprints.shared(applicable:))
    }

    /// What the fingerprints of a run's outputs are made of, worked out once per run: the parts
    /// every output shares, and each output's own. Per input, only the input's version is added,
    /// so fingerprinting an input's outputs costs time in proportion to their number (folding
    /// every output's first step into each fingerprint made it grow with the square).
    struct Fingerprints: Sendable {
        /// The tool's version, the decode settings and a digest of every output's first step,
        /// which together set the scale inputs are decoded at.
        private let shared: String
        /// The decode settings, and each output's first step, for an input that only some
        /// outputs are made for: theirs alone set its scale.
        private let decode: String
        private let firstSteps: [String]
        /// Each output's steps, encoder options and the headers its objects in a bucket carry, in
        /// the order of the definition's outputs.
        private let outputs: [String]

        init(definition: PipelineDefinition) {
            let decode = definition.decompress
            self.decode = "decode autorotate=\(decode.autorotate) failOn=\(decode.failOn.rawValue) fast=\(decode.fastShrinkOnLoad)\n"
            firstSteps = definition.outputs.map { $0.steps.first?.identifier ?? "-" }
            shared = Self.shared(decode: self.decode, firstSteps: firstSteps)
            outputs = definition.outputs.map { output in
                let tiles = output.tiles.map { "\n" + $0.identity } ?? ""
                // Whether an animated input stays animated changes only the outputs that animate.
                let animation = output.animates && decode.animation == .keep ? " animation=keep" : ""
                return "steps " + output.steps.map(\.identifier).joined(separator: ";") + "\n"
                    + "encoder " + output.encoder.identity + " background=\(output.encoder.background)" + animation + tiles
                    + Self.objectHeaders(of: output)
            }
        }

        /// An object's `Cache-Control` and metadata are stored with its bytes, so changing them
        /// makes it again. Named only when set, so that every other output keeps its fingerprint.
        private static func objectHeaders(of output: OutputDefinition) -> String {
            var text = output.cacheControl.map { "\ncache-control " + $0.debugDescription } ?? ""
            for (name, value) in output.metadata.sorted(by: { $0.key < $1.key }) {
                text += "\nmetadata " + name.debugDescription + " " + value.debugDescription
            }
            return text
        }

        /// What the fingerprints are made of but the inputs' versions and the tool's: the
        /// settings a record of the outputs (a shard's manifest) says they were made with.
        var settings: String { ([shared] + outputs).joined(separator: "\n") }

        /// The decode settings and a digest of `firstSteps`: as a set, for the scale depends on
        /// which first steps there are, not on their order, so reordering the outputs or a set's
        /// widths leaves every output up to date.
        private static func shared(decode: String, firstSteps: [String]) -> String {
            let steps = Data(Set(firstSteps).sorted().joined(separator: ";").utf8)
            WorkCounter.add(.fingerprintBytes, steps.count)
            return decode + "first steps " + String(format: "%016llx", FNV1a.hash(steps))
        }

        /// What the outputs share for an input only the outputs at `applicable` are made for.
        func shared(applicable: Set<Int>) -> String {
            Self.shared(decode: decode, firstSteps: firstSteps.indices.filter(applicable.contains).map { firstSteps[$0] })
        }

        func fingerprint(version: String, output index: Int, shared: String? = nil) -> String {
            let shared = shared ?? self.shared
            let text = Data(["pipeline \(PipelineKitInfo.version)", version, shared, outputs[index]].joined(separator: "\n").utf8)
            WorkCounter.add(.fingerprintBytes, text.count)
            return String(format: "%016llx", FNV1a.hash(text))
        }
    }
}
