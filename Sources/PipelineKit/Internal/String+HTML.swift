extension String {
    /// The text, safe inside HTML elements and quoted attribute values, and as Pango markup
    /// (GMarkup takes the same entities).
    package var htmlEscaped: String {
        var escaped = ""
        escaped.reserveCapacity(utf8.count)
        for character in unicodeScalars {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&#39;"
            default: escaped.unicodeScalars.append(character)
            }
        }
        return escaped
    }

    /// The text as a page shows a name or a reason: its control characters written as escapes,
    /// as standard error writes them (`\n`, `\u001b`), then safe in HTML. Raw, an escape byte
    /// would be a parse error and drive a terminal that prints the page, and a newline would
    /// show as a space.
    package var htmlEscapedShowingControls: String { escapingControlCharacters.htmlEscaped }
}
