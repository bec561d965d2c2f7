#if Server
/// A name compared byte for byte, as the file system compares names: Swift's `String` takes
/// canonically equal spellings as one (`café` written composed and decomposed), which name two
/// files on Linux, and a URL spelled one way must answer its own file.
struct ExactName: Hashable, Sendable {
    let name: String

    init(_ name: String) { self.name = name }

    static func == (left: ExactName, right: ExactName) -> Bool {
        left.name.utf8.elementsEqual(right.name.utf8)
    }

    // String's hash is equal for equal bytes, as these names need; spellings it takes as one
    // only share a bucket.
    func hash(into hasher: inout Hasher) { hasher.combine(name) }
}
#endif
