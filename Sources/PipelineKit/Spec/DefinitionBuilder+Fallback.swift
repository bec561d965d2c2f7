import Foundation
import Vips

extension DefinitionBuilder {
    /// `serve.fallback`: a file relative to the pipeline file's folder that libvips reads as an
    /// image, in a format named by its extension; a problem at `serve.fallback` otherwise.
    mutating func readFallback(_ text: String?, location: SourceLocation?) -> ServeSettings.Fallback? {
        guard let text else { return nil }
        let file = URL(fileURLWithPath: text, relativeTo: baseDirectory).standardizedFileURL
        guard let format = EncoderSettings.Format(fileExtension: file.pathExtension) else {
            let known = EncoderSettings.Format.fileExtensionList
            problems.append(
                .init(
                    path: "serve.fallback", location: location,
                    message: "the fallback image \(text.quotedValue) must end in one of \(known), which names its Content-Type"))
            return nil
        }
        do {
            _ = try RegularFile(opening: file.path)
            _ = try VipsImage.open(file: file.path)
        } catch let error as RegularFile.Failure {
            problems.append(
                .init(
                    path: "serve.fallback", location: location,
                    message: "cannot read the fallback image \(file.path.quotedValue): \(error.reason)"))
            return nil
        } catch {
            problems.append(
                .init(
                    path: "serve.fallback", location: location,
                    message: "the fallback image \(file.path.quotedValue) is not an image: \(error)"))
            return nil
        }
        return ServeSettings.Fallback(file: file, format: format)
    }
}
