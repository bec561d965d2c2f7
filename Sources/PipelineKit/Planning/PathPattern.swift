/// An output path in which `{width}` and `{height}` may still stand for numbers not known before
/// the image is made: each such number is one or more digits. Two patterns clash when some
/// numbers make them the same path.
struct PathPattern: Sendable {
    /// The character standing for an unknown number in a resolved path: one of Unicode's private
    /// use, which no file name holds by accident.
    static let number: Character = "\u{E000}"
    /// The character standing for one unknown lowercase hex digit (of a `{hash}`).
    static let hexDigit: Character = "\u{E001}"

    private enum Token: Equatable, Sendable {
        case scalar(Unicode.Scalar)
        /// One digit.
        case digit
        /// Any number of digits, possibly none.
        case digits
        /// One lowercase hex digit.
        case hex
    }

    private let tokens: [Token]
    /// The path without its digits and unknown numbers: two patterns can match only when these
    /// are equal, so a planner compares only patterns that share one.
    let skeleton: String

    /// A resolved path in which `PathPattern.number` stands for an unknown number.
    init(_ path: String) {
        var tokens: [Token] = []
        for scalar in path.unicodeScalars {
            if Character(scalar) == Self.number {
                tokens += [.digit, .digits]
            } else if Character(scalar) == Self.hexDigit {
                tokens.append(.hex)
            } else {
                tokens.append(.scalar(scalar))
            }
        }
        self.tokens = tokens
        var skeleton = String.UnicodeScalarView()
        for case .scalar(let scalar) in tokens where !("0"..."9").contains(scalar) { skeleton.append(scalar) }
        self.skeleton = String(skeleton)
    }

    /// Whether the path holds an unknown number.
    var hasUnknowns: Bool { tokens.contains(.digit) || tokens.contains(.hex) }

    /// Whether some numbers in place of both patterns' unknowns make them the same path: the
    /// two patterns' automata are walked together, breadth first, over pairs of positions.
    func canMatch(_ other: PathPattern) -> Bool {
        let a = tokens, b = other.tokens
        var seen = Set<[Int]>()
        var queue: [[Int]] = []
        func visit(_ i: Int, _ j: Int) {
            guard seen.insert([i, j]).inserted else { return }
            queue.append([i, j])
            // `.digits` may match nothing: skipping it is free.
            if i < a.count, a[i] == .digits { visit(i + 1, j) }
            if j < b.count, b[j] == .digits { visit(i, j + 1) }
        }
        visit(0, 0)
        while let state = queue.popLast() {
            let (i, j) = (state[0], state[1])
            if i == a.count, j == b.count { return true }
            guard i < a.count, j < b.count, Self.overlap(a[i], b[j]) else { continue }
            visit(a[i] == .digits ? i : i + 1, b[j] == .digits ? j : j + 1)
        }
        return false
    }

    /// Whether one character can match both tokens.
    private static func overlap(_ x: Token, _ y: Token) -> Bool {
        switch (x, y) {
        case (.scalar(let p), .scalar(let q)): p == q
        case (.scalar(let p), .hex), (.hex, .scalar(let p)): ("0"..."9").contains(p) || ("a"..."f").contains(p)
        case (.scalar(let p), _), (_, .scalar(let p)): ("0"..."9").contains(p)
        default: true
        }
    }
}
