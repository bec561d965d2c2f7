#if Server
import Foundation
import Hummingbird
import PipelineKit

/// `serve.fallback`: the image answered, as imgproxy's fallback image, in place of an input that
/// cannot be read as an image or made into the output. Read once, when the routes are made.
struct FallbackImage: Sendable {
    /// Marks an answer as the fallback image, not the file asked for.
    static let header = HTTPFields.Element.Name("X-Pipeline-Fallback")!

    private let body: ByteBuffer
    private let mimeType: String

    /// The image of `settings`, or nil when it can no longer be read (the file's check read it).
    init?(_ settings: ServeSettings.Fallback) {
        guard let data = FileManager.default.contents(atPath: settings.file.path) else { return nil }
        body = ByteBuffer(bytes: data)
        mimeType = settings.format.mimeType
    }

    /// 200 with the image. Not cached for long: the input may be fixed.
    var response: Response {
        Response(
            status: .ok, headers: [.contentType: mimeType, .cacheControl: "no-cache", Self.header: "1"],
            body: .init(byteBuffer: body))
    }
}
#endif
