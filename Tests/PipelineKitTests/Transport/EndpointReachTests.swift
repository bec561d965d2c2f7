import Foundation
import Testing

@testable import PipelineKit

/// An endpoint is given up on only after several requests in a row went unanswered, and only
/// for the hold-off: then it is asked again, and any answer clears what was learnt.
struct EndpointReachTests {
    @Test func anEndpointIsGivenUpOnAfterRequestsInARowGoUnanswered() {
        let reach = EndpointReach()
        for _ in 1..<EndpointReach.silentAfter { reach.noteUnanswered("refused") }
        #expect(reach.refusal(naming: "the endpoint") == nil)

        reach.noteUnanswered("timed out")
        let refusal = reach.refusal(naming: "the endpoint http://127.0.0.1:9")
        #expect(refusal?.hasPrefix("not sent: the endpoint http://127.0.0.1:9 gave no answer to 3 requests in a row") == true)
        #expect(refusal?.contains("(timed out); it is asked again 30s after that") == true, "\(refusal ?? "")")
    }

    @Test func anAnswerBetweenUnansweredRequestsStartsTheCountAgain() {
        let reach = EndpointReach()
        for _ in 1..<EndpointReach.silentAfter { reach.noteUnanswered("refused") }
        reach.noteAnswered()
        reach.noteUnanswered("refused")
        #expect(reach.refusal(naming: "the endpoint") == nil)
    }

    @Test func aSilentEndpointIsAskedAgainAfterTheHoldOffAndAnAnswerClearsIt() async throws {
        let reach = EndpointReach(holdOff: .milliseconds(100))
        for _ in 0..<EndpointReach.silentAfter { reach.noteUnanswered("refused") }
        #expect(reach.refusal(naming: "the endpoint") != nil)

        try await Task.sleep(for: .milliseconds(150))
        #expect(reach.refusal(naming: "the endpoint") == nil)
        // Asked again and still silent: given up on again at once
        reach.noteUnanswered("refused")
        #expect(reach.refusal(naming: "the endpoint")?.contains("4 requests in a row") == true)
        // Back: answered
        reach.noteAnswered()
        #expect(reach.refusal(naming: "the endpoint") == nil)
    }
}
