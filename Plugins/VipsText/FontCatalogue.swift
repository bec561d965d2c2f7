import CFontconfig
import PipelineKit

/// The fonts fontconfig knows, as Pango (inside libvips' `text`) will find them.
///
/// Pango never fails on a font it lacks: it draws the nearest one fontconfig offers. Asking
/// fontconfig the same question first, and comparing the family it answers with, turns a
/// misspelt or missing font into an error when the pipeline is checked.
enum FontCatalogue {
    /// Throws unless fontconfig's best match for `family` is that family.
    static func requireInstalled(_ family: String) throws(OptionError) {
        let matched = matchingFamilies(family)
        let wanted = normalised(family)
        guard !matched.contains(where: { normalised($0) == wanted }) else { return }
        let nearest = matched.first.map { "; fontconfig would substitute \($0.quotedValue)" } ?? ""
        throw OptionError(option: "font", "font \(family.quotedValue) is not installed\(nearest) (fc-list : family lists those that are)")
    }

    /// Throws when no installed font has a glyph for some character of `text`: Pango draws
    /// such a character as a box, and falls back to every font fontconfig sorts after
    /// `family` for the others, so only what none of them has is missing.
    static func requireGlyphs(for text: String, family: String) throws(OptionError) {
        guard let pattern = makePattern(family) else { return }
        defer { FcPatternDestroy(pattern) }
        var result = FcResultNoMatch
        var coverage: OpaquePointer?
        guard let fonts = FcFontSort(nil, pattern, FcTrue, &coverage, &result) else { return }
        defer {
            FcFontSetDestroy(fonts)
            if let coverage { FcCharSetDestroy(coverage) }
        }
        guard let coverage else { return }
        var missing: [Unicode.Scalar] = []
        for scalar in text.unicodeScalars where !missing.contains(scalar) && isDrawn(scalar) {
            if FcCharSetHasChar(coverage, scalar.value) == FcFalse { missing.append(scalar) }
        }
        guard let first = missing.first else { return }
        let named = missing.prefix(5).map { "\"\($0)\" (U+\(String($0.value, radix: 16, uppercase: true)))" }
        let more = missing.count > 5 ? " and \(missing.count - 5) more" : ""
        throw OptionError(
            option: "text",
            "no installed font has \(named.joined(separator: ", "))\(more): each would be drawn as a box; install a font "
                + "that has \(missing.count == 1 ? "it" : "them") (fc-list ':charset=\(String(first.value, radix: 16))' lists those that have the first)"
        )
    }

    /// Whether a character is drawn with a glyph of its own: spaces, controls, joiners and
    /// variation selectors shape the others and need none.
    private static func isDrawn(_ scalar: Unicode.Scalar) -> Bool {
        let properties = scalar.properties
        return !properties.isWhitespace && !properties.isVariationSelector
            && ![.control, .format, .lineSeparator, .paragraphSeparator, .spaceSeparator].contains(properties.generalCategory)
    }

    /// The family names (a font may have several, one per language) of the font fontconfig
    /// would use for `family`; empty when fontconfig has none at all.
    static func matchingFamilies(_ family: String) -> [String] {
        guard let pattern = makePattern(family) else { return [] }
        defer { FcPatternDestroy(pattern) }
        var result = FcResultNoMatch
        guard let match = FcFontMatch(nil, pattern, &result) else { return [] }
        defer { FcPatternDestroy(match) }
        var families: [String] = []
        // Bounded: a font lists a handful of localised names.
        for index in 0..<64 {
            var value: UnsafeMutablePointer<FcChar8>?
            guard FcPatternGetString(match, "family", Int32(index), &value) == FcResultMatch, let value else { break }
            families.append(String(cString: value))
        }
        return families
    }

    /// A pattern asking for `family`, with fontconfig's substitutions made, as Pango asks;
    /// the caller destroys it.
    private static func makePattern(_ family: String) -> OpaquePointer? {
        guard let pattern = FcPatternCreate() else { return nil }
        // Added as a family value, not parsed as a fontconfig name, so that `-` and `:` in it
        // are part of the name.
        _ = family.withCString { name in
            name.withMemoryRebound(to: FcChar8.self, capacity: family.utf8.count + 1) { FcPatternAddString(pattern, "family", $0) }
        }
        FcConfigSubstitute(nil, pattern, FcMatchPattern)
        FcDefaultSubstitute(pattern)
        return pattern
    }

    /// Fontconfig's own comparison of family names: case and spaces do not count.
    private static func normalised(_ family: String) -> String {
        String(family.lowercased().filter { !$0.isWhitespace })
    }
}
