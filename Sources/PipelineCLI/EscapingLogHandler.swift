import Logging
import PipelineKit

/// swift-log's handler for standard error, with control characters in each message and
/// metadata value written as escapes (`\n`): a value that came from outside (a query's, a
/// file's name) cannot print a line of its own, and pass for another request or a warning.
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
        case .string(let text): .string(text.escapingControlCharacters)
        case .stringConvertible(let convertible): .string(convertible.description.escapingControlCharacters)
        case .array(let values): .array(values.map(escaping))
        case .dictionary(let values): .dictionary(values.mapValues(escaping))
        }
    }
}
