extension String {
    /// The most characters of a value from the pipeline file (or any user input) that a message
    /// quotes, so that a message about a value of any length stays one line.
    static let quotedValueLimit = 200

    /// The text in double quotes, for a message that names a value the user wrote; past
    /// `quotedValueLimit` characters it is cut, "…" ends it, and its length follows
    /// (`"abc…" (5000000 characters)`).
    package var quotedValue: String {
        guard let cut = cutAtLimit else { return "\"" + self + "\"" }
        return "\"" + cut + "…\" (\(count) characters)"
    }

    /// The text as a message may hold it unquoted (a key in a JSON path): past
    /// `quotedValueLimit` characters, its first ones and "…".
    package var cutForMessage: String {
        cutAtLimit.map { $0 + "…" } ?? self
    }

    /// The first `quotedValueLimit` characters, or nil when the text has no more.
    private var cutAtLimit: String? {
        // Counted only as far as the limit: most values are short.
        guard let end = index(startIndex, offsetBy: Self.quotedValueLimit, limitedBy: endIndex), end != endIndex else {
            return nil
        }
        return String(self[..<end])
    }
}
