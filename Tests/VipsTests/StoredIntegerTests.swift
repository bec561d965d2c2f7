import Testing
import Vips

@Suite("StoredInteger")
struct StoredIntegerTests {
    private let bytes: [UInt8] = [0x12, 0x34, 0x56, 0x78, 0x9A, 0xFF]

    @Test func readsEitherByteOrderAndAnyWidthUpToFourBytes() {
        #expect(bytes.storedInteger(at: 0) == 0x1234_5678)
        #expect(bytes.storedInteger(at: 0, bigEndian: false) == 0x7856_3412)
        #expect(bytes.storedInteger(at: 2) == 0x5678_9AFF)
        #expect(bytes.storedInteger(at: 4, count: 2) == 0x9AFF)
        #expect(bytes.storedInteger(at: 4, count: 2, bigEndian: false) == 0xFF9A)
        #expect(bytes.storedInteger(at: 5, count: 1) == 0xFF)
        // Unsigned: a word with its top bit set is not negative
        #expect([UInt8](repeating: 0xFF, count: 4).storedInteger(at: 0) == 0xFFFF_FFFF)
    }

    @Test func bytesPastEitherEndAreNil() {
        #expect(bytes.storedInteger(at: 3) == nil)
        #expect(bytes.storedInteger(at: 5, count: 2) == nil)
        #expect(bytes.storedInteger(at: -1) == nil)
        #expect([UInt8]().storedInteger(at: 0, count: 1) == nil)
        // A slice is read at its own indices
        let slice = bytes[2...]
        #expect(slice.storedInteger(at: 2, count: 2) == 0x5678)
        #expect(slice.storedInteger(at: 0, count: 2) == nil)
    }

    @Test func aReaderOfBytesStopsAtTheFirstMissingOne() {
        var asked: [Int] = []
        let value = StoredInteger.at(10, bigEndian: false) { offset in
            asked.append(offset)
            return offset < 12 ? UInt8(offset) : nil
        }
        #expect(value == nil)
        // Least significant first: the last byte is asked for first, and is missing
        #expect(asked == [13])
    }
}
