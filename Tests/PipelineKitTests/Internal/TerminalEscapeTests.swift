import Foundation
import Testing

@testable import PipelineKit

/// Control characters in a name are written escaped, as `--json` writes them.
@Suite struct TerminalEscapeTests {
    @Test func controlCharactersAreWrittenAsJSONWritesThem() {
        #expect("x\nfailed: fake.jpg".escapingControlCharacters == #"x\nfailed: fake.jpg"#)
        #expect("a\tb\rc\u{1B}[31md\u{7F}\u{85}\u{2028}".escapingControlCharacters == #"a\tb\rc\u001b[31md\u007f\u0085\u2028"#)
        #expect("plain ünïcødé, spaces & $hell".escapingControlCharacters == "plain ünïcødé, spaces & $hell")
    }

    @Test func aBackslashIsEscapedSoNoTwoNamesPrintAlike() {
        // A newline and a backslash followed by an n were both written \n
        let newline = "a\nb.jpg".escapingControlCharacters
        let backslash = #"a\nb.jpg"#.escapingControlCharacters
        #expect(newline == #"a\nb.jpg"#)
        #expect(backslash == #"a\\nb.jpg"#)
        #expect(newline != backslash)
        #expect(#"C:\dir"#.escapingControlCharacters == #"C:\\dir"#)
    }
}
