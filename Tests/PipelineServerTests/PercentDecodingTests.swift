#if Server
import Foundation
import Testing

@testable import PipelineServer

/// A path's parts are decoded as Foundation decodes them, whether or not they have a `%`.
@Suite struct PercentDecodingTests {
    @Test(arguments: ["plain.jpg", "sub/b.jpg", "a%2Fb.jpg", "%2e%2e", "caf%C3%A9.jpg", "100%", "bad%zz", "%FF", "a+b", "é.jpg", ""])
    func decodesAsFoundationDoes(_ text: String) {
        #expect(text.percentDecoded == text.removingPercentEncoding)
        #expect(text[...].percentDecoded == text.removingPercentEncoding)
    }

    @Test func aPartWithoutPercentIsItself() {
        #expect("photos/a b.jpg".percentDecoded == "photos/a b.jpg")
        #expect("a%20b".percentDecoded == "a b")
        #expect("a%2".percentDecoded == nil)
    }

    @Test func aQuerysNamesAndValuesAreDecodedAndAnUndecodableOneKeptAsSent() {
        let parameters = decodedQueryParameters("%77idth=32&format=web%70&flag&bad%zz=1%&&empty=")
        #expect(parameters.map(\.name) == ["width", "format", "flag", "bad%zz", "empty"])
        #expect(parameters.map(\.value) == ["32", "webp", "", "1%", ""])
        #expect(decodedQueryParameters(nil).isEmpty)
    }
}
#endif
