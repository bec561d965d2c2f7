import Foundation

/// A string value of the pipeline file that may stand for an environment variable, so that a
/// secret (a header's token, the key of signed URLs) stays out of the file: only a whole value
/// `${NAME}`, NAME being letters, digits and `_` and not starting with a digit, is read from the
/// environment. Any other text is itself, `"Bearer ${TOKEN}"` included. A `$` more before the
/// reference writes it as text: `"$${NAME}"` is the text `${NAME}`, `"$$${NAME}"` is `$${NAME}`.
enum EnvironmentReference: Equatable {
    /// Text to use as it is.
    case text(String)
    /// The value of the environment variable of this name.
    case variable(String)

    init(_ value: String) {
        let dollars = value.prefix { $0 == "$" }.count
        let rest = value.dropFirst(dollars)
        guard dollars >= 1, rest.hasPrefix("{"), rest.hasSuffix("}"), rest.count >= 3,
            Self.isName(rest.dropFirst().dropLast())
        else {
            self = .text(value)
            return
        }
        self = dollars == 1 ? .variable(String(rest.dropFirst().dropLast())) : .text(String(value.dropFirst()))
    }

    /// Whether `name` is a variable's name as shells write them: `[A-Za-z_][A-Za-z0-9_]*`.
    static func isName(_ name: Substring) -> Bool {
        guard let first = name.unicodeScalars.first, first == "_" || first.isASCIILetter else { return false }
        return name.unicodeScalars.allSatisfy { $0 == "_" || $0.isASCIILetter || ("0"..."9").contains($0) }
    }

    /// Whether `value` holds a `${…}` that is not read, being part of a longer value.
    static func looksLikeAnUnreadReference(_ value: String) -> Bool {
        guard case .text = EnvironmentReference(value), let open = value.range(of: "${") else { return false }
        return value[open.upperBound...].contains("}") && !value.hasPrefix("$$")
    }
}

extension Unicode.Scalar {
    fileprivate var isASCIILetter: Bool { ("a"..."z").contains(self) || ("A"..."Z").contains(self) }
}

extension DefinitionBuilder {
    /// The value `text` at `path` stands for: itself, or the environment variable it names. An
    /// unset or empty variable is a problem naming the variable and the path, and gives nil. No
    /// message says the value: it is a secret.
    mutating func resolvingEnvironment(_ text: String, at path: String, location: SourceLocation?) -> (value: String, variable: String?)? {
        switch EnvironmentReference(text) {
        case .text(let value):
            if EnvironmentReference.looksLikeAnUnreadReference(value) {
                warnings.append(
                    "\(path): only a whole value \"${NAME}\" is read from the environment; this one is sent as it is written")
            }
            return (value, nil)
        case .variable(let name):
            guard let value = environment[name], !value.isEmpty else {
                problems.append(
                    .init(
                        path: path, location: location,
                        message: "the environment variable \(name) "
                            + (environment[name] == nil ? "is not set" : "is empty") + " (the value is \"${\(name)}\")"))
                return nil
            }
            return (value, name)
        }
    }

    /// The `fetch.headers`, with the environment's values for `${NAME}`; a name that is not an
    /// HTTP token, or a value that is not one line of text (it would end the header early and
    /// start another), is a problem.
    mutating func readHeaders(_ root: JSONNode) -> [String: String] {
        guard case .object(let members)? = root["fetch"]?["headers"]?.value else { return [:] }
        var headers: [String: String] = [:]
        for member in members {
            guard case .string(let written) = member.value.value else { continue }
            let path = "fetch.headers." + member.key.escapingControlCharacters
            guard Self.isHeaderName(member.key) else {
                problems.append(
                    .init(
                        path: path, location: member.value.location,
                        message: "\(member.key.quotedValue) is not a header name: letters, digits and !#$%&'*+-.^_`|~ only"))
                continue
            }
            guard let (value, variable) = resolvingEnvironment(written, at: path, location: member.value.location) else { continue }
            if value.unicodeScalars.contains(where: { $0 == "\r" || $0 == "\n" || $0 == "\0" }) {
                let source = variable.map { "the value of the environment variable \($0)" } ?? "the value"
                problems.append(
                    .init(
                        path: path, location: member.value.location,
                        message: "\(source) holds a line break or NUL, which would end the header early"))
                continue
            }
            headers[member.key] = value
        }
        return headers
    }

    /// Whether `name` is an HTTP header name (RFC 9110's token): libcurl sends any text as one,
    /// so a space or a colon would make another header, or a request servers refuse.
    static func isHeaderName(_ name: String) -> Bool {
        !name.isEmpty
            && name.unicodeScalars.allSatisfy { scalar in
                scalar.isASCII
                    && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || "!#$%&'*+-.^_`|~".unicodeScalars.contains(scalar))
            }
    }
}
