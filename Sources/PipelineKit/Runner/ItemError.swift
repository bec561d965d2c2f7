import Foundation

/// Why one input (or one output of it) failed: what kind of failure, in which stage (and step,
/// when a processor step failed), the error underneath (libvips', libcurl's, the system's, a
/// plugin's) and the reason for people.
///
/// ```swift
/// switch failure.error.kind {
/// case .httpStatus: print("HTTP", (failure.error.underlyingError as? HTTPStatusError)?.status ?? 0)
/// case .processing: print("step", failure.error.step?.name ?? "?", "threw", failure.error.underlyingError ?? "")
/// default: print(failure)
/// }
/// ```
public struct ItemError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, for a program to act on. A struct over a private enum, so kinds can be
    /// added without breaking a `switch` (which always has a `default`).
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String {
            case refused, unreadable, changed, tooLarge, network, httpStatus, unsupportedFormat, undecodable,
                tooManyPixels, overMemoryBudget, timedOut, processing, encoding, writing, outputPath, other
        }

        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// Refused before any work: a value the input fills into an output path would leave its folder.
        public static let refused = Kind(.refused)
        /// A local input cannot be read (missing, not a regular file, no permission, empty);
        /// the underlying error is a `POSIXError` when the system gave one.
        public static let unreadable = Kind(.unreadable)
        /// A local input changed while it was being read (written in place, or replaced): a
        /// passing state, which the next attempt reads at its new version.
        public static let changed = Kind(.changed)
        /// The input is larger than `fetch.maxBytes`.
        public static let tooLarge = Kind(.tooLarge)
        /// The server could not be reached or answered badly (DNS, connection, timeout,
        /// redirect); the underlying error is the loader's `FetchError`.
        public static let network = Kind(.network)
        /// The server answered with an error status; the underlying error is an `HTTPStatusError`.
        public static let httpStatus = Kind(.httpStatus)
        /// Not an image libvips may read (unknown, unsupported or blocked format).
        public static let unsupportedFormat = Kind(.unsupportedFormat)
        /// An image libvips could not decode (truncated, corrupt); the underlying error is a
        /// `VipsError` when libvips gave one.
        public static let undecodable = Kind(.undecodable)
        /// More pixels than `decompress.maxPixels`, declared by the file or made by a step, or
        /// more animation frames than `decompress.maxFrames`.
        public static let tooManyPixels = Kind(.tooManyPixels)
        /// Decoding the input and making its outputs would need more memory than the run's whole
        /// budget (`--max-memory`, the cgroup's limit, `RLIMIT_AS`): it could never start.
        public static let overMemoryBudget = Kind(.overMemoryBudget)
        /// Decoding took longer than `decompress.timeout`, or the input than `limits.itemTimeout`.
        public static let timedOut = Kind(.timedOut)
        /// A processor step failed (`step` names it); the underlying error is what it threw.
        public static let processing = Kind(.processing)
        /// The encoder failed; the underlying error is a `VipsError`.
        public static let encoding = Kind(.encoding)
        /// The output could not be written; the underlying error is a `POSIXError`.
        public static let writing = Kind(.writing)
        /// The output path cannot be used: it would leave its folder, or another output of
        /// this run wrote it already.
        public static let outputPath = Kind(.outputPath)
        /// Anything else.
        public static let other = Kind(.other)

        /// The kind's name (`processing`, `httpStatus`, …), as reports give it.
        public var description: String { base.rawValue }
    }

    /// One step of an output's chain, as the pipeline file lists it.
    public struct Step: Sendable, Hashable, Codable, CustomStringConvertible {
        /// Its index in the output's `steps`, from 0.
        public let index: Int
        /// The processor's name, for example `crop`.
        public let name: String

        /// The step at `index` in the output's `steps`, named `name`.
        public init(index: Int, name: String) {
            self.index = index
            self.name = name
        }

        /// As a JSON path within the output, the way pipeline-file errors name it: `steps[1].crop`.
        public var description: String { "steps[\(index)].\(name)" }
    }

    /// What kind of failure, for programs.
    public let kind: Kind
    /// The stage that failed.
    public let stage: Stage
    /// The reason for people, without the stage and step.
    public let reason: String
    /// The processor step that failed, or nil when the failure is not a step's.
    public let step: Step?
    /// The error this one wraps, when there was one: a `VipsError`, a `FetchError`, a
    /// `POSIXError`, an `HTTPStatusError`, or whatever a plugin threw.
    public let underlyingError: (any Error)?

    /// A failure of `kind` in `stage`, with its reason, step and wrapped error.
    public init(_ kind: Kind, stage: Stage, reason: String, step: Step? = nil, underlying: (any Error)? = nil) {
        self.kind = kind
        self.stage = stage
        self.reason = reason
        self.step = step
        self.underlyingError = underlying
    }

    /// `STAGE: steps[N].NAME: REASON` (the step when known).
    public var description: String {
        "\(stage.rawValue): \(step.map { "\($0): " } ?? "")\(reason)"
    }

    /// Equal when a person and a program would see the same failure: the underlying errors
    /// are not compared (most error types are not `Equatable`).
    public static func == (lhs: ItemError, rhs: ItemError) -> Bool {
        lhs.kind == rhs.kind && lhs.stage == rhs.stage && lhs.reason == rhs.reason && lhs.step == rhs.step
    }
}

/// An HTTP status a server answered with instead of the image.
public struct HTTPStatusError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The HTTP status code.
    public let status: Int
    /// `HTTP STATUS`.
    public var description: String { "HTTP \(status)" }
}

extension ItemError {
    /// The system's error for `code` (for example `errno` right after a failed call), with its
    /// text appended to `what`.
    static func system(_ kind: Kind, stage: Stage, _ what: String, code: Int32 = errno) -> ItemError {
        let reason = "\(what): \(String(cString: strerror(code)))"
        return ItemError(kind, stage: stage, reason: reason, underlying: POSIXErrorCode(rawValue: code).map { POSIXError($0) })
    }

    /// `error` as an item's failure in `stage`, or `CancellationError` again when the run was
    /// cancelled while the work was queued, or stopped work that says only that (an upload the
    /// cancel cut off): the input was not made, which is not a failure.
    static func wrapping(_ error: any Error, stage: Stage) throws(CancellationError) -> ItemError {
        if let error = error as? ItemError {
            if error.underlyingError is CancellationError { throw CancellationError() }
            return error
        }
        if error is CancellationError { throw CancellationError() }
        return ItemError(.other, stage: stage, reason: description(of: error), underlying: error)
    }
}
