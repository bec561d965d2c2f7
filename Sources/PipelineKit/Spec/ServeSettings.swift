import Foundation

/// The `serve` section: how `pipeline serve` answers requests for the outputs.
public struct ServeSettings: Sendable, Equatable {
    /// The `Cache-Control` of every file answered, or nil for none.
    public var cacheControl: String?
    /// Most connections open at once; more wait to be accepted.
    public var maxConnections: Int
    /// Inputs not made yet that may wait for the server's runs, beyond those being made (the
    /// in-flight window's worth); a request for another then gets 503 with `Retry-After`.
    public var maxQueue: Int
    /// The key and salt of signed URLs (`serve.key`, `serve.salt`, hex in the file), or nil
    /// when URLs are not signed.
    public var signing: Signing?
    /// Whether answers ask for client hints (`Accept-CH`) and a request's `Sec-CH-Width` (or
    /// `Width`) picks its width when it has no `?width=` (`serve.clientHints`).
    public var clientHints: Bool
    /// Seconds the requests in flight have to be answered after SIGTERM (`serve.drainTimeout`).
    public var drainTimeout: Double
    /// Seconds a request for a file waits for it to be made or read from its store
    /// (`serve.timeout`); past them it gets 503 with `Retry-After`, while its run goes on.
    public var timeout: Double
    /// The image answered in place of an input that cannot be read or made (`serve.fallback`),
    /// or nil to answer such a request 422.
    public var fallback: Fallback?
    /// Whether a request for one file of an input makes every output of that input, as a batch
    /// run does (`serve.makeAll`), rather than only the file it names.
    public var makeAll: Bool

    /// An image file answered in place of an input that cannot be read or made.
    public struct Fallback: Sendable, Equatable {
        /// The file.
        public var file: URL
        /// Its format, from its extension, for `Content-Type`.
        public var format: EncoderSettings.Format

        /// The image `file`, in `format`.
        public init(file: URL, format: EncoderSettings.Format) {
            self.file = file
            self.format = format
        }
    }

    /// The key and salt URLs are signed with, as imgproxy signs them: HMAC-SHA256 with `key` of
    /// `salt` followed by the path.
    public struct Signing: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
        /// The HMAC key's bytes.
        public var key: [UInt8]
        /// The bytes put before the path.
        public var salt: [UInt8]

        /// A key and salt.
        public init(key: [UInt8], salt: [UInt8]) {
            self.key = key
            self.salt = salt
        }

        /// `Signing(key: <redacted>, salt: <redacted>)`: a secret is printed nowhere, however
        /// the settings around it are described or logged.
        public var description: String { "Signing(key: <redacted>, salt: <redacted>)" }

        /// As `description`.
        public var debugDescription: String { description }

        /// The bytes of a hex string (two digits a byte, either case), or nil when it is not one.
        public static func bytes(hex: String) -> [UInt8]? {
            let digits = Array(hex.utf8)
            guard !digits.isEmpty, digits.count.isMultiple(of: 2) else { return nil }
            var bytes: [UInt8] = []
            bytes.reserveCapacity(digits.count / 2)
            for index in stride(from: 0, to: digits.count, by: 2) {
                guard let high = value(of: digits[index]), let low = value(of: digits[index + 1]) else { return nil }
                bytes.append(high << 4 | low)
            }
            return bytes
        }

        private static func value(of digit: UInt8) -> UInt8? {
            switch digit {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
            default: nil
            }
        }
    }

    /// The default of `maxConnections`: far more than the stages can make at once, few enough
    /// that a flood of idle connections cannot use up the process's open files.
    public static let defaultMaxConnections = 1024
    /// The default of `maxQueue`.
    public static let defaultMaxQueue = 64
    /// The default of `drainTimeout`: as long as Kubernetes waits before it kills a pod.
    public static let defaultDrainTimeout: Double = 30
    /// The default of `timeout`: as long as nginx, the usual proxy in front, waits for an answer
    /// (`proxy_read_timeout`), past which no client would get this one.
    public static let defaultTimeout: Double = 60
    /// The longest `drainTimeout` or `timeout`: past an hour, a client, a proxy or an
    /// orchestrator has long given up.
    public static let longestTimeout: Double = 3600
    /// The first parts of the server's own paths (`/healthz`, `/metrics`, `/info/{input}`): no
    /// output may have one as its name, which would be the first part of its URLs too.
    public static let reservedNames: Set<String> = ["healthz", "info", "metrics"]

    /// The section's settings; a file without the section has the defaults.
    public init(
        cacheControl: String? = nil, maxConnections: Int = ServeSettings.defaultMaxConnections,
        maxQueue: Int = ServeSettings.defaultMaxQueue, signing: Signing? = nil, clientHints: Bool = false, fallback: Fallback? = nil,
        drainTimeout: Double = ServeSettings.defaultDrainTimeout, timeout: Double = ServeSettings.defaultTimeout, makeAll: Bool = false
    ) {
        self.makeAll = makeAll
        self.timeout = timeout
        self.drainTimeout = drainTimeout
        self.clientHints = clientHints
        self.fallback = fallback
        self.cacheControl = cacheControl
        self.maxConnections = maxConnections
        self.maxQueue = maxQueue
        self.signing = signing
    }
}
