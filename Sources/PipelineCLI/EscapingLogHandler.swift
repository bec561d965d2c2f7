import Logging
import PipelineKit

/// swift-log's handler for standard error, with control characters in each message and
/// metadata value written as escapes (`\n`): a value that came from outside (a query's, a
/// file's name) cannot print a line of its own, and pass for another request or a warning. A
/// value with a space, `=` or `"` is in double quotes, its quotes escaped, so that it cannot
/// pass for other fields of its line either (`reason="width \" status=200"`).
struct EscapingLogHandler: LogHandler {
    private var written: StreamLogHandler

    init(label: String) {
        written = StreamLogHandler.standardError(label: label)
    }

    var logLevel: Logger.Level {
        get { written.logLevel }
        set { written.logLevel = newValue }
    }

    var metadata: Logger.Metadata {
        get { written.metadata }
        set { written.metadata = newValue }
    }

    var metadataProvider: Logger.MetadataProvider? {
        get { written.metadataProvider }
        set { written.metadataProvider = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { written[metadataKey: key] }
        set { written[metadataKey: key] = newValue }
    }

    func log(event: LogEvent) {
        var escaped = event
        escaped.message = "\(event.message.description.escapingControlCharacters)"
        escaped.metadata = event.metadata?.mapValues(Self.escaping)
        written.log(event: escaped)
    }

    private static func escaping(_ value: Logger.Metadata.Value) -> Logger.Metadata.Value {
        switch value {
        case .string(let text): .string(field(text))
        case .stringConvertible(let convertible): .string(field(convertible.description))
        case .array(let values): .array(values.map(escaping))
        case .dictionary(let values): .dictionary(values.mapValues(escaping))
        }
    }

    /// `text` as one field's value: its control characters escaped, and quoted when it has a
    /// space, `=` or `"`.
    static func field(_ text: String) -> String {
        let escaped = text.escapingControlCharacters
        guard escaped.contains(where: { $0 == " " || $0 == "=" || $0 == "\"" }) else { return escaped }
        return "\"" + escaped.replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }
}
