import PipelineKit

/// Checks the colour steps' Swift initialisers share, so code gets the errors a pipeline file's
/// validator would give.
enum OptionChecks {
    static func check(_ name: String, _ value: Double, in range: ClosedRange<Double>) throws(OptionError) {
        guard range.contains(value) else {
            throw OptionError(option: name, "must be between \(range.lowerBound.plainText) and \(range.upperBound.plainText)")
        }
    }

    /// A colour as red, green, blue and alpha 0–255 (alpha 255 when only three are given).
    static func colour(_ name: String, _ components: [Double]) throws(OptionError) -> [Double] {
        guard components.count == 3 || components.count == 4, components.allSatisfy({ (0...255).contains($0) }) else {
            throw OptionError(option: name, "expected 3 or 4 components between 0 and 255")
        }
        return components.count == 3 ? components + [255] : components
    }

    /// `#rrggbbaa`, for identifiers.
    static func hex(_ colour: [Double]) -> String {
        "#"
            + colour.map { component in
                let text = String(Int(component.rounded()), radix: 16)
                return text.count == 1 ? "0" + text : text
            }.joined()
    }
}

extension Double {
    /// `2` rather than `2.0`, for messages.
    var plainText: String {
        rounded() == self && abs(self) < 1e15 ? String(Int(self)) : String(self)
    }
}
