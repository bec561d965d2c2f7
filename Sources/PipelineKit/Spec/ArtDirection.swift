import Foundation

/// One entry of an output's `art`: another crop of the image for the screens a media query
/// names, made at its own widths in every format of the output. `pipeline html` gives each
/// entry its `<source media=…>` elements before the output's own, so a browser on a small
/// screen takes a square crop where a wide one takes the whole photo (art direction).
public struct ArtDirection: Sendable, Hashable {
    /// The media query the crop is for, as `<source media>` takes it: `(max-width: 640px)`.
    public var media: String
    /// The crop's aspect ratio as written, `W:H` (`1:1`, `4:5`, `1.91:1`).
    public var aspectRatio: String
    /// The crop's width over its height.
    public var ratio: Double
    /// The widths to make, in pixels.
    public var widths: [Int]
    /// The `sizes` attribute of its sources, when it differs from the page's.
    public var sizes: String?

    /// The entry's part of a file name: `-` and its aspect ratio with `x` for `:` (`-1x1`), what
    /// `{art}` in a path gives its files (the output's own files give nothing).
    public var fileTag: String { "-" + aspectRatio.replacingOccurrences(of: ":", with: "x") }

    /// The height of the crop `width` pixels wide, at least one pixel, and at most `Int.max` for a
    /// ratio that would make it taller than any integer.
    public func height(forWidth width: Int) -> Int {
        let height = (Double(width) / ratio).rounded()
        return height < Double(Int.max) ? max(1, Int(height)) : Int.max
    }

    /// The width over height of `text` written `W:H` with positive numbers; nil otherwise.
    public static func ratio(of text: String) -> Double? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let width = Double(parts[0]), let height = Double(parts[1]),
            width.isFinite, height.isFinite, width > 0, height > 0,
            parts.allSatisfy({ $0.allSatisfy { $0.isNumber || $0 == "." } })
        else { return nil }
        return width / height
    }

    /// Whether `earlier`, a media query listed before `later`, matches every screen `later`
    /// does, so that a browser, which takes the first that matches, never takes `later`: both
    /// of one simple form, `(max-width: Npx)` with `earlier` the wider, or `(min-width: Npx)`
    /// with `earlier` the narrower. Other queries are not judged.
    static func shadows(_ earlier: String, _ later: String) -> Bool {
        guard let first = simpleWidth(earlier), let second = simpleWidth(later), first.bound == second.bound else { return false }
        return first.bound == "max-width" ? first.pixels >= second.pixels : first.pixels <= second.pixels
    }

    /// Whether `media` matches every screen (`all`, `screen`, `(min-width: 0px)`): the sources
    /// listed after its entry, the output's own among them, are then never chosen.
    static func matchesEveryScreen(_ media: String) -> Bool {
        let text = media.lowercased().filter { !$0.isWhitespace }
        return text == "all" || text == "screen" || text == "(min-width:0)" || simpleWidth(text).map { $0 == ("min-width", 0) } == true
    }

    /// `(max-width: 640px)` or `(min-width: 640px)` taken apart, or nil for any other query.
    private static func simpleWidth(_ media: String) -> (bound: String, pixels: Double)? {
        let text = media.lowercased().filter { !$0.isWhitespace }
        guard text.hasPrefix("("), text.hasSuffix("px)") else { return nil }
        let inner = text.dropFirst().dropLast(3)
        for bound in ["max-width", "min-width"] where inner.hasPrefix(bound + ":") {
            return Double(inner.dropFirst(bound.count + 1)).map { (bound, $0) }
        }
        return nil
    }
}
