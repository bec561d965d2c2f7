import Testing

@testable import PipelineCLI

/// The help texts, which the man page is made from.
@Suite struct HelpTextTests {
    /// A blank line in a discussion is an empty line in the man page, which groff warns of (CI's
    /// install check renders the page with warnings as errors).
    @Test func noCommandsDiscussionHasABlankLine() {
        var commands = [PipelineCommand.configuration]
        var checked = 0
        while let configuration = commands.popLast() {
            #expect(!configuration.discussion.contains("\n\n"), "\(configuration.commandName ?? "pipeline")")
            checked += 1
            if checked < 100 { commands += configuration.subcommands.map { $0.configuration } }
        }
        #expect(checked > 10, "\(checked) commands")
    }
}
