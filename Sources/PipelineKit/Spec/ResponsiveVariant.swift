/// One width × format combination of an output that lists `widths` and `formats`.
///
/// Such an output becomes one `OutputDefinition` per combination, all with the output's name
/// and path template: the rest of the runner (steps, encoding, the journal, the decoder's
/// shrink-on-load) then works on each as on any output. What ties them together is here.
public struct ResponsiveVariant: Sendable, Hashable {
    /// The width asked for, or nil for `"original"` (the width the image has at the resize) and
    /// for an output that lists formats but no widths.
    public var width: Int?
    /// Where in the output's `formats` this variant's encoder is.
    public var formatIndex: Int
    /// The output's index in the pipeline file's `outputs`.
    public var group: Int
    /// Whether widths above the image's own are made by enlarging it (the resize step says
    /// `"withoutEnlargement": false`); otherwise the image's own width stands in for them, once.
    public var enlarges: Bool
    /// How many of the output's steps run before its resize: the image's width at the resize
    /// is what widths are compared with.
    public var stepsBeforeResize: Int
    /// The index in the output's `art` of the crop this variant is made for, or nil for the
    /// output's own widths.
    public var art: Int? = nil
    /// Whether the output lists its own `widths` (where a nil `width` is `"original"`, listed
    /// alone or beside others), rather than formats alone.
    public var listsWidths = false
}

extension ResponsiveVariant {
    /// The variants of one output and format that are made from an image `width` wide at the
    /// resize, as indices into `widths` (nil for `"original"`), following eleventy-img: widths
    /// below the image's are made; the image's own width is made once, by `"original"`, by a
    /// width equal to it, or else by the smallest width above it (which cannot enlarge, so it
    /// gives the image's width); the other widths above it are not made, so a small photo gives
    /// fewer files rather than blurry ones. With `enlarges`, every width is made (and
    /// `"original"` too, unless a width equal to the image's makes the same file).
    static func chosen(widths: [Int?], imageWidth: Int, enlarges: Bool) -> [Int] {
        if enlarges {
            let numbered = widths.indices.filter { widths[$0] != nil }
            let original = widths.contains(imageWidth) ? nil : widths.firstIndex(where: { $0 == nil })
            return (numbered + [original].compactMap { $0 }).sorted()
        }
        var chosen = widths.indices.filter { widths[$0].map { $0 < imageWidth } ?? false }
        let ownWidth =
            widths.firstIndex(where: { $0 == nil }) ?? widths.firstIndex(where: { $0 == imageWidth })
            ?? narrowestIndex(above: imageWidth, in: widths)
        if let ownWidth { chosen.append(ownWidth) }
        return chosen.sorted()
    }

    /// The index of the narrowest of `widths` above `imageWidth` (the first, if several), if any.
    private static func narrowestIndex(above imageWidth: Int, in widths: [Int?]) -> Int? {
        var narrowest: (index: Int, width: Int)?
        for (index, width) in widths.enumerated() {
            guard let width, width > imageWidth, width < narrowest?.width ?? .max else { continue }
            narrowest = (index, width)
        }
        return narrowest?.index
    }
}

extension OutputDefinition {
    /// Which set of the output's widths this is, by its art crop and format (`art 1:1, png`);
    /// nil for an output of one file.
    var setDescription: String? {
        guard let variant else { return nil }
        return ((variant.art.map { ["art \(art[$0].aspectRatio)"] } ?? []) + [encoder.format.rawValue]).joined(separator: ", ")
    }

    /// Which of an output's files this definition makes, for messages that must tell them
    /// apart: its art crop, width and format (`art 1:1, 160 px, webp`); nil for an output of one file.
    var variantDescription: String? {
        guard let variant else { return nil }
        let crop = variant.art.map { "art \(art[$0].aspectRatio)" }
        let width = variant.width.map { "\($0) px" } ?? "its own width"
        return ([crop, width].compactMap { $0 } + [encoder.format.rawValue]).joined(separator: ", ")
    }
}

extension PipelineDefinition {
    /// Which outputs are made for an input of `size` (upright, as decoded): all but the widths
    /// of responsive outputs that the image is too narrow for (see `ResponsiveVariant.chosen`).
    func outputsMade(for size: ImageSize) -> Set<Int> {
        var made = Set(outputs.indices.filter { outputs[$0].variant == nil })
        for members in responsiveSets {
            let (atResize, exact) = sizeAtResize(of: members, for: size)
            made.formUnion(chosenMembers(members, atResize: atResize).chosen)
            // A size the plan is not sure of may not be the image's: `"original"` is kept, and
            // the fan-out leaves it out if a width's file turns out to be its (`maker(ofFileOf:)`).
            if !exact, let original = members.first(where: { outputs[$0].variant?.width == nil }) { made.insert(original) }
        }
        return made
    }

    /// What an input of `size` (upright, as decoded) tells of the sets that enlarge, before any
    /// file is made: which width makes `"original"`'s file, and which are enlarged.
    func widths(at size: ImageSize) -> WidthsAtSize {
        var found = WidthsAtSize()
        for members in responsiveSets {
            guard outputs[members[0]].variant?.enlarges == true else { continue }
            let (atResize, exact) = sizeAtResize(of: members, for: size)
            let imageWidth = chosenMembers(members, atResize: atResize).imageWidth
            found.enlarged.formUnion(members.filter { (outputs[$0].variant?.width ?? 0) > imageWidth })
            guard exact, let original = members.first(where: { outputs[$0].variant?.width == nil }) else { continue }
            let maker = maker(ofFileOf: original, in: members, atResize: atResize)
            if maker != original { found.makingOriginal.insert(maker) }
        }
        return found
    }

    /// The size an input of `size` has as it reaches the resize of the set `members`, as far as
    /// a plan can tell, and whether that is sure: a step before the resize may be one a plan
    /// cannot size (`trim`).
    private func sizeAtResize(of members: [Int], for size: ImageSize) -> (size: ImageSize, exact: Bool) {
        let first = outputs[members[0]]
        let before = first.steps.prefix(first.variant?.stepsBeforeResize ?? 0)
        return (before.reduce(size) { $1.outputSize(for: $0) }, before.isEmpty)
    }

    /// The output that makes the file the set member at `index` would make, once its image is
    /// known to be `atResize` as it reaches the resize: `index` itself when it is made at that
    /// size, else the member whose file has the same width. A step whose result a plan cannot
    /// size (`trim`) leaves the plan's choice too wide, and two widths standing in for the
    /// image's own would name one file. `members` is its set (`setOfEachWidth`).
    func maker(ofFileOf index: Int, in members: [Int], atResize: ImageSize) -> Int {
        guard let variant = outputs[index].variant, !members.isEmpty else { return index }
        let (chosen, imageWidth) = chosenMembers(members, atResize: atResize)
        guard !chosen.contains(index) else { return index }
        // Enlarging, every width is made, and only "original" is left out for the width equal
        // to the image's; otherwise one member stands in for the image's own width.
        let sameWidth = chosen.first { member in
            let width = outputs[member].variant?.width
            return variant.enlarges ? width == imageWidth : (width ?? .max) >= imageWidth
        }
        return sameWidth ?? index
    }

    /// The set each width of a set belongs to, by its index in `outputs`: worked out once for a
    /// run, where every made width asks for its own.
    var setOfEachWidth: [Int: [Int]] {
        Dictionary(uniqueKeysWithValues: responsiveSets.flatMap { members in members.map { ($0, members) } })
    }

    /// Each output's files of one format and art crop (or of its own widths), as indices into
    /// `outputs`, in order: one choice of widths is made for each.
    private var responsiveSets: [[Int]] {
        let variants = outputs.indices.compactMap { index in outputs[index].variant.map { (index: index, variant: $0) } }
        let sets = Dictionary(grouping: variants) { [$0.variant.group, $0.variant.formatIndex, $0.variant.art ?? -1] }
        return sets.values.map { $0.map(\.index).sorted() }
    }

    /// Of one set's `members`, those made from an image `atResize` as it reaches the resize,
    /// and the width they were chosen by: an art crop's is the widest window of its ratio.
    private func chosenMembers(_ members: [Int], atResize: ImageSize) -> (chosen: [Int], imageWidth: Int) {
        let first = outputs[members[0]]
        let variant = first.variant
        let imageWidth = variant?.art.map { ArtCrop.widestWindow(in: atResize, ratio: first.art[$0].ratio) } ?? atResize.width
        let positions = ResponsiveVariant.chosen(
            widths: members.map { outputs[$0].variant?.width }, imageWidth: imageWidth, enlarges: variant?.enlarges ?? false)
        return (positions.map { members[$0] }, imageWidth)
    }

    /// Whether which outputs are made depends on the input's size, so its header is read first:
    /// when an output lists widths beside others or beside `"original"`.
    var choosesWidthsBySize: Bool {
        outputs.contains { $0.variant.map { $0.width != nil } ?? false }
    }
}

/// What an input's size, read from its header, tells of the sets of widths that enlarge, before
/// any file is made: what a request for `"original"`, or for the widest, is answered with.
struct WidthsAtSize: Sendable {
    /// The widths whose files are also `"original"`'s: the width equal to the image's own at
    /// the resize, for which `"original"` is left out.
    var makingOriginal: Set<Int> = []
    /// The widths wider than the image's own at the resize, made by enlarging it: the widest
    /// file is one of them, not `"original"`'s.
    var enlarged: Set<Int> = []
}
