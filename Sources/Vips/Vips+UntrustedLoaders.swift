import CVips

extension Vips {
    /// Lets libvips use the loader class `name` (such as `VipsForeignLoadSvg`, with its file,
    /// buffer and source variants) despite `prepareForUntrustedInput()`, for the whole process.
    /// Whoever calls it decides per input whether that loader may read it: libvips' block is
    /// process-wide, so once lifted it guards nothing for anyone.
    public static func unblockLoader(_ name: String) {
        guard (try? prepareForUntrustedInput()) != nil else { return }
        // Once a class: libvips writes the flags unlocked, while decodes on other threads read them.
        unblockedLoaders.withLock { unblocked in
            guard unblocked.insert(name).inserted else { return }
            vips_operation_block_set(name, 0)
        }
    }

    /// The loader classes `unblockLoader` has unblocked.
    private static let unblockedLoaders = Locked<Set<String>>([])
}

extension VipsImage {
    /// The libvips loader that would read the file, judged from its first bytes (and name),
    /// whether or not it is blocked: its class name (`VipsForeignLoadSvgFile`, …); nil when no
    /// loader knows the format. Touches libvips' shared error buffer when none does.
    public static func loaderClass(file path: String) -> String? {
        guard (try? Vips.start()) != nil, let name = pl_find_loader_file(path) else { return nil }
        return String(cString: name)
    }

    /// The loader that would read `bytes`, blocked or not; see `loaderClass(file:)`.
    public static func loaderClass(bytes: VipsBytes) -> String? {
        guard (try? Vips.start()) != nil else { return nil }
        let name = bytes.withUnsafeBytes { pl_find_loader_buffer($0.baseAddress, $0.count) }
        return name.map { String(cString: $0) }
    }
}
