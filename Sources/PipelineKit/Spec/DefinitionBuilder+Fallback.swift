import Foundation
import Vips

extension DefinitionBuilder {
    /// `serve.fallback`: a file relative to the pipeline file's folder that libvips reads as an
    /// image, in the format its extension names (which names its `Content-Type`: a browser told
    /// `image/webp` of a JPEG under `nosniff` shows nothing), of at most `maxPixels` in all its
    /// frames, as an input is held to (`decompress.maxPixels`): it is made narrower for requests;
    /// a problem at `serve.fallback` otherwise.
    mutating func readFallback(_ text: String?, location: SourceLocation?, maxPixels: Int) -> ServeSettings.Fallback? {
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
            let header = try VipsImage.open(file: file.path)
            let found = ImageDecoder.formatName(of: header)
            guard found == format.rawValue else {
                problems.append(
                    .init(
                        path: "serve.fallback", location: location,
                        message:
                            "the fallback image \(text.quotedValue) is \(found), not the \(format.rawValue) its extension names as its Content-Type",
                        fileAtFault: file.path))
                return nil
            }
            let (width, height) = (header.width, header.height)
            // The header's height is every frame's with `n=-1`; a first frame's alone here.
            let pixels = width.multipliedReportingOverflow(by: height * max(1, header.pageCount))
            if pixels.overflow || pixels.partialValue > maxPixels {
                problems.append(
                    .init(
                        path: "serve.fallback", location: location,
                        message: "the fallback image \(text.quotedValue) is \(width)×\(height)"
                            + (header.pageCount > 1 ? " × \(header.pageCount) frames" : "")
                            + ", more than the \(maxPixels) pixels decompress.maxPixels allows an image",
                        fileAtFault: file.path))
                return nil
            }
        } catch let error as RegularFile.Failure {
            problems.append(
                .init(
                    path: "serve.fallback", location: location,
                    message: "cannot read the fallback image \(file.path.quotedValue): \(error.reason)", fileAtFault: file.path))
            return nil
        } catch {
            problems.append(
                .init(
                    path: "serve.fallback", location: location,
                    message: "the fallback image \(file.path.quotedValue) is not an image: \(error)", fileAtFault: file.path))
            return nil
        }
        return ServeSettings.Fallback(file: file, format: format)
    }
}
