import Foundation
import Testing

@testable import PipelineKit

/// How a URL is shown wherever pipeline shows or stores one: every query value, the fragment,
/// path parameters and the userinfo hidden, whatever they are called; names kept.
@Suite struct URLRedactionTests {
    let hiding = CredentialRedaction()

    @Test func everyQueryValueIsHiddenAndItsNameKept() {
        #expect(
            hiding.redact("https://cdn.example/a.jpg?w=300&access_token=SECRET1&apikey=SECRET2&secret=SECRET3")
                == "https://cdn.example/a.jpg?w=…&access_token=…&apikey=…&secret=…")
        // A value with no name, an empty value and an empty parameter.
        #expect(hiding.redact("http://h/a.jpg?SECRET4&empty=&&x=1") == "http://h/a.jpg?…&empty=&&x=…")
        // An "=" in a value (base64) is part of the value.
        #expect(hiding.redact("http://h/a?sig=ab==&k=%3D") == "http://h/a?sig=…&k=…")
    }

    @Test func theFragmentIsHidden() {
        #expect(hiding.redact("http://h/a.jpg#SECRET5") == "http://h/a.jpg#…")
        #expect(hiding.redact("http://h/a.jpg?x=1#SECRET6?y=2") == "http://h/a.jpg?x=…#…")
        #expect(hiding.redact("http://h/a.jpg#") == "http://h/a.jpg#")
    }

    @Test func pathParametersAreHidden() {
        #expect(hiding.redact("http://h/shop/a.jpg;jsessionid=SECRET7") == "http://h/shop/a.jpg;jsessionid=…")
        #expect(hiding.redact("http://h/x;v=SECRET8;bare/a.jpg;jsessionid=SECRET9?q=1") == "http://h/x;v=…;…/a.jpg;jsessionid=…?q=…")
        // A ";" in the query is part of a query value.
        #expect(hiding.redact("http://h/a.jpg?x=1;jsessionid=SECRET10") == "http://h/a.jpg?x=…")
    }

    @Test func theUserAndPasswordAreHidden() {
        #expect(hiding.redact("http://user:SECRET11@127.0.0.1:8080/a.jpg") == "http://…@127.0.0.1:8080/a.jpg")
        // The authority ends at the first "/": an "@" in the path is the path's.
        #expect(hiding.redact("https://example.com/a@b.jpg") == "https://example.com/a@b.jpg")
        #expect(hiding.redact("http://SECRET12@h?x=1") == "http://…@h?x=…")
    }

    @Test func showQueryNamesTheValuesThatMayShow() {
        let showing = CredentialRedaction(showQuery: ["w", "fit", "a b"])
        #expect(
            showing.redact("http://h/a.jpg?w=300&fit=cover&W=1&token=SECRET13&a%20b=2#SECRET14")
                == "http://h/a.jpg?w=300&fit=cover&W=…&token=…&a%20b=2#…")
        // Path parameters and the fragment are not query parameters.
        #expect(showing.redact("http://h/a.jpg;w=SECRET15") == "http://h/a.jpg;w=…")
    }

    @Test func aURLOnceRedactedStaysAsItIs() {
        let once = hiding.redact("http://u:p@h/x;s=1/a.jpg?w=1&t#f")
        #expect(once == "http://…@h/x;s=…/a.jpg?w=…&…#…")
        #expect(hiding.redact(once) == once)
    }

    @Test func textIsLeftAloneAndURLsInMessagesAreRedacted() {
        #expect(hiding.redact("/local/file.jpg?x=1") == "/local/file.jpg?x=1")
        #expect(
            hiding.redactURLs(in: "redirected to ftp://u:SECRET16@h/x?token=SECRET17 whose scheme is not http")
                == "redirected to ftp://…@h/x?token=… whose scheme is not http")
    }

    /// Output paths come from the URL's path: a session id in it is no part of a file name.
    @Test func pathParametersAreNoPartOfAnInputsNames() {
        let input = InputFile(url: "http://127.0.0.1:8080/x;v=SECRET18/shop/a.jpg;jsessionid=SECRET19?w=1")
        #expect(input.fileName == "a.jpg" && input.stem == "a" && input.fileExtension == "jpg")
        #expect(input.subfolder == "127.0.0.1_8080/x/shop")
        #expect(input.displayName == "http://127.0.0.1:8080/x;v=…/shop/a.jpg;jsessionid=…?w=…")
        // A ";" written %3B is part of the name.
        #expect(InputFile(url: "http://h/a%3Bb.jpg").fileName == "a;b.jpg")
        // The URL is fetched as written.
        #expect(input.url == "http://127.0.0.1:8080/x;v=SECRET18/shop/a.jpg;jsessionid=SECRET19?w=1")
    }
}
