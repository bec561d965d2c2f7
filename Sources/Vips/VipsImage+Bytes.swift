import CVips

extension VipsImage {
    /// Every band value of every pixel of an 8-bit image, row by row, `bands` values a pixel.
    ///
    /// Computes the pixels if they are not in memory yet; for images of other band formats use
    /// `values()`.
    public func bytes() throws(VipsError) -> [UInt8] {
        guard bandFormat == .uchar else {
            throw VipsError(operation: "write_to_memory", message: "bytes() needs an 8-bit image, not \(bandFormat)")
        }
        return try withMemory { Array($0) }
    }

    /// Every band value of every pixel as a `Double`, row by row, `bands` values a pixel, for an
    /// image of any band format (histograms, statistics, float images).
    public func values() throws(VipsError) -> [Double] {
        let doubles = try derive("cast") { pl_cast($0, $1, VIPS_FORMAT_DOUBLE) }
        return try doubles.withMemory { memory in
            let count = memory.count / MemoryLayout<Double>.stride
            return (0..<count).map { memory.loadUnaligned(fromByteOffset: $0 * MemoryLayout<Double>.stride, as: Double.self) }
        }
    }

    /// Lends the image's pixels, computed into one contiguous block, to `body`.
    func withMemory<Result>(_ body: (UnsafeRawBufferPointer) -> Result) throws(VipsError) -> Result {
        var size = 0
        let memory = withExtendedLifetime(self) { vips_image_write_to_memory(pointer, &size) }
        guard let memory else { throw VipsError.fromLibrary(operation: "write_to_memory") }
        defer { g_free(memory) }
        return body(UnsafeRawBufferPointer(start: memory, count: size))
    }
}
