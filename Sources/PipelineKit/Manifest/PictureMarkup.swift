/// A `<picture>` element for one output of one manifest entry: a `<source media>` per art
/// direction crop and format, with the crop's `width` and `height`, then a `<source>` per format
/// but the last, and an `<img>` in the last format (the fallback) with its intrinsic `width` and
/// `height` (so the page does not jump, whichever shape the browser picks), `srcset` and `sizes`,
/// lazy loading and async decoding, and the placeholder, when there is one and the image is
/// opaque, as its background until the image arrives.
public struct PictureMarkup: Sendable {
    /// The `sizes` attribute: how wide the image is shown, for the browser to pick a file.
    public var sizes: String
    /// The `alt` text.
    public var alt: String
    /// `lazy` (the default) or `eager` for an image in the first screen.
    public var loading: String

    /// Markup with these attributes; the defaults suit an image as wide as the viewport, below the first screen.
    public init(sizes: String = "100vw", alt: String = "", loading: String = "lazy") {
        self.sizes = sizes
        self.alt = alt
        self.loading = loading
    }

    /// The element's HTML, indented two spaces a level, ending in a newline.
    public func html(for output: ImageManifest.Output) -> String? {
        guard let fallbackFormat = output.formats.last, let fallback = output.fallback else { return nil }
        var lines = ["<picture>"]
        // Art direction first: the browser takes the first <source> whose media and type match.
        for art in output.art ?? [] {
            for format in art.formats {
                // The widest file's size: a crop's shape is not the <img>'s, and a <source> in a
                // <picture> gives the box its own.
                guard let widest = format.files.max(by: { $0.width < $1.width }) else { continue }
                lines.append(
                    "  <source media=\"\(art.media.htmlEscaped)\" type=\"\(format.mimeType.htmlEscaped)\" "
                        + "srcset=\"\(format.srcset.htmlEscaped)\" sizes=\"\((art.sizes ?? sizes).htmlEscaped)\" "
                        + "width=\"\(widest.width)\" height=\"\(widest.height)\">")
            }
        }
        for format in output.formats.dropLast() where !format.files.isEmpty {
            lines.append(
                "  <source type=\"\(format.mimeType.htmlEscaped)\" srcset=\"\(format.srcset.htmlEscaped)\" sizes=\"\(sizes.htmlEscaped)\">")
        }
        var attributes = [
            ("src", fallback.url), ("srcset", fallbackFormat.srcset), ("sizes", sizes),
            ("width", String(fallback.width)), ("height", String(fallback.height)),
            ("alt", alt), ("loading", loading), ("decoding", "async"),
        ]
        if let style = placeholderStyle(output.placeholders) { attributes.append(("style", style)) }
        let rendered = attributes.map { "\($0.0)=\"\($0.1.htmlEscaped)\"" }.joined(separator: " ")
        lines.append("  <img \(rendered)>")
        lines.append("</picture>")
        return lines.joined(separator: "\n") + "\n"
    }

    /// The blurred tiny image when there is one (scaled to cover the box), else the dominant
    /// colour; none behind a transparent image, where nothing would hide it once it loads.
    private func placeholderStyle(_ placeholders: Placeholders?) -> String? {
        guard placeholders?.transparent != true else { return nil }
        if let lqip = placeholders?.lqip {
            return "background-image: url(\(lqip)); background-size: cover; background-repeat: no-repeat"
        }
        if let colour = placeholders?.dominantColor {
            return "background-color: \(colour)"
        }
        return nil
    }
}
