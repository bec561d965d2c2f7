import Foundation
import Testing
import Vips

@testable import PipelineKit

/// libvips' error text turned into a report's reason: the lines that belong to this input.
@Suite struct LibvipsErrorTextTests {
    static let source = EncodedSource.memory(VipsBytes(Data([0])))

    /// A damaged AVIF's failure as libvips 8.14 gives it, with libvips' source's complaint
    /// about a seek past the end before libheif's own reason.
    @Test func aSeekPastTheEndBesideTheLoadersReasonIsLeftOut() {
        let error = VipsError(
            operation: "heifload", message: "bad seek to 68037; heif: Decoder plugin generated an error: Unspecified (7.0)")
        #expect(LibvipsErrorText.ownMessage(error, source: Self.source) == "heif: Decoder plugin generated an error: Unspecified (7.0)")
    }

    /// Alone, it is all there is to say, and stays.
    @Test func aSeekPastTheEndAloneStays() {
        let error = VipsError(operation: "heifload", message: "bad seek to 12; bad seek to 40")
        #expect(LibvipsErrorText.ownMessage(error, source: Self.source) == "bad seek to 12; bad seek to 40")
    }

    /// A step's or an encoder's failure copies out what libvips' one error buffer holds,
    /// another thread's seek among it, after whatever it was reading.
    @Test func anotherThreadsSeekIsLeftOutOfAStepsReason() {
        for stray in ["/proc/self/fd/13: bad seek to 560", "source: bad seek to 343", "/srv/out/a.png-2.avif: bad seek to 320"] {
            let error = VipsError(operation: "rank", message: "\(stray); rank: window too large")
            #expect(ItemError.reason(for: error) == "rank: window too large", "\(stray)")
        }
        let alone = VipsError(operation: "heifload", message: "source: bad seek to 12")
        #expect(ItemError.reason(for: alone) == "source: bad seek to 12")
        let notASeek = VipsError(operation: "x", message: "bad seek to the end; x: failed")
        #expect(ItemError.reason(for: notASeek) == "bad seek to the end; x: failed")
        // A reason of ours that quotes a message beginning with another thread's seek is kept
        let quoting = VipsError(
            operation: "icc_transform",
            message: "encode.iccProfile /p/brand.icc is not a profile libvips can use now: /proc/self/fd/77: bad seek to 325; "
                + "icc_transform: no output profile")
        #expect(ItemError.reason(for: quoting) == quoting.message)
    }

    /// Lines naming another file are another input's, and are left out; this input's path is
    /// not repeated.
    @Test func otherFilesLinesAreLeftOutAndThisFilesPathIsNotRepeated() {
        let source = EncodedSource.file(path: "/in/a.png", byteCount: 1)
        let error = VipsError(operation: "pngload", message: "/in/b.png: libpng read error; /in/a.png: bad adaptive filter value")
        #expect(LibvipsErrorText.ownMessage(error, source: source) == "bad adaptive filter value")
    }
}
