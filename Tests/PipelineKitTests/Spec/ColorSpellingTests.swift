import Foundation
import StandardProcessors
import TestSupport
import Testing

@testable import PipelineKit

/// Colour keys are spelt `color`, as CSS spells them; `colour` is read as `color` with a
/// warning, and both in one object is an error.
@Suite struct ColorSpellingTests {
    func definition(tint: String) throws -> PipelineDefinition {
        let json =
            #"{"version": 1, "inputs": ["in/*.jpg"], "outputs": [{"name": "o", "steps": [{"tint": \#(tint)}], "#
            + #""encode": {"format": "png"}, "path": "out/{stem}.png"}]}"#
        return try PipelineDefinition(json: json, baseDirectory: URL(fileURLWithPath: "/site", isDirectory: true), processors: .standard)
    }

    @Test func colourIsReadAsColorWithANote() throws {
        let british = try definition(tint: ##"{"colour": "#704214"}"##)
        let american = try definition(tint: ##"{"color": "#704214"}"##)
        #expect(british.outputs.first?.steps.first?.identifier == american.outputs.first?.steps.first?.identifier)
        #expect(british.warnings.contains { $0.contains(#""colour" is read as "color""#) }, "\(british.warnings)")
        #expect(american.warnings.isEmpty)
    }

    @Test func bothSpellingsInOneStepAreAnError() {
        #expect {
            try definition(tint: ##"{"colour": "#704214", "color": "#000000"}"##)
        } throws: { error in
            "\(error)".contains(#"tint.colour: unknown key "colour""#)
        }
    }

    @Test func aWrongValueUnderColourIsReportedAtColor() {
        #expect {
            try definition(tint: ##"{"colour": "mauvish"}"##)
        } throws: { error in
            "\(error)".contains("tint.color")
        }
    }
}
