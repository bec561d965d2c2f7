import Foundation

/// Writing a whole buffer to a descriptor, through short writes and interrupted calls.
package enum DescriptorWrite {
    /// Writes every byte of `bytes` to `descriptor`: 0 once all are written, else the errno of
    /// the write that failed (EPIPE when a pipe's reader has gone; EIO for one that wrote nothing).
    package static func all(_ bytes: UnsafeRawBufferPointer, to descriptor: Int32) -> Int32 {
        guard let base = bytes.baseAddress else { return 0 }
        var offset = 0
        // Each pass writes something or returns.
        while offset < bytes.count {
            let written = write(descriptor, base + offset, bytes.count - offset)
            if written < 0, errno == EINTR { continue }
            guard written > 0 else { return written < 0 ? errno : EIO }
            offset += written
        }
        return 0
    }
}
