import Foundation
import TestSupport
import Testing

@testable import PipelineKit

/// What the report page shows of outputs in a bucket.
extension S3StorageTests {
    /// An output in a bucket is shown by its address, with no link: a `file://` URL made of its
    /// address led to a folder named `s3:` that does not exist.
    @Test func theReportPageShowsAnObjectsAddressWithoutALink() async throws {
        let (server, directory, environment) = try photoServer(key: "in/a.jpg")
        defer { withExtendedLifetime(server) {} }
        let made = try pipeline(["s3://photos/in/a.jpg"], outputPath: "s3://site/t/{stem}.webp", in: directory, environment: environment)
        let recorder = try await ReportWriterTests.record(made)
        #expect(try recorder.report.succeeded == 1)
        let html = try recorder.htmlReport(inputDirectory: nil).render()
        #expect(html.contains(#"<span class="frame checker" title="s3://site/t/a.webp">"#), "\(html)")
        #expect(!html.contains("s3%3A") && !html.contains("href=\"file:///"), "\(html)")
    }
}
