import Foundation
import Testing

@testable import PipelineKit

/// An input's names: those that are parts of its path are kept as where they start in it, and
/// read back as they were given whichever way they are kept.
@Suite struct InputFileTests {
    @Test func namesThatArePartsOfThePathReadBackAsGiven() {
        let input = InputFile(
            path: "/site/photos/sub/deep/c.PNG", displayName: "photos/sub/deep/c.PNG", subfolder: "sub/deep", byteCount: 7)
        #expect(input.displayName == "photos/sub/deep/c.PNG")
        #expect(input.subfolder == "sub/deep")
        #expect(input.fileName == "c.PNG")
        #expect(input.stem == "c" && input.fileExtension == "PNG")
        #expect(input.byteCount == 7 && input.url == nil && input.listedVersion == nil && !input.isRemote)

        let top = InputFile(path: "/a.jpg", displayName: "/a.jpg", subfolder: "")
        #expect(top.displayName == "/a.jpg" && top.subfolder == "" && top.fileName == "a.jpg")
    }

    @Test func namesThatAreNotPartsOfThePathReadBackAsGiven() {
        // A display name and a {dir} from elsewhere (a server's request, an embedder's own input).
        let elsewhere = InputFile(path: "/srv/in/b.jpg", displayName: "request b", subfolder: "x/y")
        #expect(elsewhere.displayName == "request b" && elsewhere.subfolder == "x/y" && elsewhere.fileName == "b.jpg")
        // A subfolder that is the path's bytes but not a whole component.
        let partial = InputFile(path: "/srv/inbox/b.jpg", displayName: "b.jpg", subfolder: "box")
        #expect(partial.subfolder == "box")
        // The last component as the file system names it, not the empty text after a final "/".
        let slash = InputFile(path: "/srv/in/dir.jpg/", displayName: "dir.jpg/", subfolder: "")
        #expect(slash.fileName == "dir.jpg" && slash.displayName == "dir.jpg/")
        // Accents decomposed in the path: bytes, not characters, are kept and read back.
        let decomposed = "e\u{301}t\u{301}e\u{301}"
        let accented = InputFile(path: "/srv/\(decomposed)/\(decomposed).jpg", displayName: "\(decomposed).jpg", subfolder: decomposed)
        #expect(accented.subfolder.utf8.elementsEqual(decomposed.utf8))
        #expect(accented.fileName.utf8.elementsEqual("\(decomposed).jpg".utf8))
        #expect(accented.stem.utf8.elementsEqual(decomposed.utf8))
    }

    @Test func inputsAreTheSameWhenEveryNameIs() {
        let one = InputFile(path: "/in/a.jpg", displayName: "in/a.jpg", subfolder: "")
        #expect(one == InputFile(path: "/in/a.jpg", displayName: "in/a.jpg", subfolder: ""))
        #expect(one != InputFile(path: "/in/a.jpg", displayName: "/in/a.jpg", subfolder: ""))
        #expect(one != InputFile(path: "/in/a.jpg", displayName: "in/a.jpg", subfolder: "in"))
        #expect(Set([one, InputFile(path: "/in/a.jpg", displayName: "in/a.jpg", subfolder: "")]).count == 1)
        let remote = InputFile(url: "https://example.com/photos/a.jpg")
        #expect(remote.subfolder == "example.com/photos" && remote.fileName == "a.jpg" && remote.isRemote)
        #expect(
            remote != InputFile(path: "https://example.com/photos/a.jpg", displayName: "https://example.com/photos/a.jpg", subfolder: ""))
    }

    @Test func aURLsHostFolderHoldsNoColon() {
        // A port as `_port`, and an IPv6 address's colons and zone sign as `-`: a folder name may
        // hold no `:` on Windows, SMB shares or in macOS' Finder.
        #expect(InputFile(url: "http://127.0.0.1:8080/img/cat.jpg").subfolder == "127.0.0.1_8080/img")
        #expect(InputFile(url: "http://[::1]:8080/img/cat.jpg").subfolder == "--1_8080/img")
        #expect(InputFile(url: "https://[2001:db8::1]/cat.jpg").subfolder == "2001-db8--1")
        #expect(InputFile(url: "http://[fe80::1%25eth0]/cat.jpg").subfolder == "fe80--1-eth0")
        #expect(InputFile(url: "https://example.com:443/cat.jpg").subfolder == "example.com")
    }

    /// A plan keeps an input for every listing and a target for every output of every listing,
    /// for the whole run: what they hold inline is what a run of many inputs holds per input.
    @Test func aPlannedInputAndTargetStaySmall() {
        #expect(MemoryLayout<InputFile>.stride <= 64, "\(MemoryLayout<InputFile>.stride)")
        #expect(MemoryLayout<OutputTarget>.stride <= 32, "\(MemoryLayout<OutputTarget>.stride)")
    }

    @Test func everyKindOfInputReadsBackFromItsRecordWithEveryName() throws {
        // A plan keeps its inputs on disk and reads them back as the run takes them.
        let inputs = [
            InputFile(path: "/site/photos/sub/é.jpg", displayName: "photos/sub/é.jpg", subfolder: "sub", byteCount: 7),
            InputFile(path: "/srv/in/b.jpg", displayName: "request b", subfolder: "x/y"),
            InputFile(path: "/a.jpg", displayName: "/a.jpg", subfolder: ""),
            InputFile(url: "https://user:secret@example.com:8443/p/q.png?x=1"),
            InputFile(s3: try #require(S3Location("s3://bucket/in/c.webp")), subfolder: "in", etag: "\"abc\"", byteCount: 12),
        ]
        for input in inputs {
            let read = try #require(InputFile(record: input.record()), "\(input.displayName)")
            #expect(read == input, "\(input.displayName)")
            #expect(read.url == input.url && read.listedVersion == input.listedVersion && read.byteCount == input.byteCount)
        }
        // Bytes cut short or with more after them are not a record.
        let record = inputs[3].record()
        #expect(InputFile(record: Array(record.dropLast())) == nil)
        #expect(InputFile(record: record + [0]) == nil)
    }
}
