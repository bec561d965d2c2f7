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

    /// The family names (a font may have several, one per language) of the font fontconfig
    /// would use for `family`; empty when fontconfig has none at all.
    static func matchingFamilies(_ family: String) -> [String] {
        guard let pattern = FcPatternCreate() else { return [] }
        defer { FcPatternDestroy(pattern) }
        // Added as a family value, not parsed as a fontconfig name, so that `-` and `:` in it
        // are part of the name.
        _ = family.withCString { name in
            name.withMemoryRebound(to: FcChar8.self, capacity: family.utf8.count + 1) { FcPatternAddString(pattern, "family", $0) }
        }
        FcConfigSubstitute(nil, pattern, FcMatchPattern)
        FcDefaultSubstitute(pattern)
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

    /// Fontconfig's own comparison of family names: case and spaces do not count.
    private static func normalised(_ family: String) -> String {
        String(family.lowercased().filter { !$0.isWhitespace })
    }
}
