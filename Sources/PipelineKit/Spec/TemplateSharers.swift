/// The outputs that share one path template and agree on `{output}` and `{format}`: the sizes
/// their steps fix for `{width}` and `{height}` (nil when not fixed, or not in the template) are
/// all that may still tell two apart. Finds the first earlier output that would write the same
/// files as a new one with a few lookups.
struct TemplateSharers {
    struct Size: Hashable {
        let width: Int?
        let height: Int?
    }

    /// The first output added with each size, with each width, with each height, and at all.
    private var bySize: [Size: Int] = [:]
    private var byWidth: [Int?: Int] = [:]
    private var byHeight: [Int?: Int] = [:]
    private var first: Int?

    /// The first output added that an output of `size` clashes with: two sizes differ only
    /// when both are fixed and not equal.
    func firstClash(with size: Size) -> Int? {
        let candidates: [Int?] =
            switch (size.width, size.height) {
            case (let width?, let height?):
                [
                    bySize[size], bySize[Size(width: width, height: nil)], bySize[Size(width: nil, height: height)],
                    bySize[Size(width: nil, height: nil)],
                ]
            case (nil, let height?): [byHeight[height], byHeight[nil]]
            case (let width?, nil): [byWidth[width], byWidth[nil]]
            case (nil, nil): [first]
            }
        return candidates.compactMap { $0 }.min()
    }

    mutating func add(_ index: Int, size: Size) {
        if bySize[size] == nil { bySize[size] = index }
        if byWidth[size.width] == nil { byWidth[size.width] = index }
        if byHeight[size.height] == nil { byHeight[size.height] = index }
        if first == nil { first = index }
    }
}
