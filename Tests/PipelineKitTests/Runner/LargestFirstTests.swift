import TestSupport
import Testing

@testable import PipelineKit

/// The order inputs start in: largest first, ties and unknown sizes in listing order, dealt in
/// rounds so that copies of one large input do not start side by side.
struct LargestFirstTests {
    private func item(_ name: String, bytes: Int64?) -> RunPlan.Item {
        let input = InputFile(path: "/in/" + name, displayName: name, subfolder: "", byteCount: bytes)
        return RunPlan.Item(listings: [RunPlan.Listing(input: input, targets: [], refusal: nil, sameAs: nil)])
    }

    /// `copies` distinct files of each size in `sizes`, listed copy by copy (r1-…, r2-…), as
    /// `Benchmarks/run.sh --repeat` lists hard links of a corpus.
    private func copies(_ copies: Int, ofSizes sizes: [Int64]) -> [RunPlan.Item] {
        (1...copies).flatMap { copy in sizes.map { item("r\(copy)-\($0)", bytes: $0) } }
    }

    /// The items in the order `largestFirst` starts them.
    private func largestFirst(_ items: [RunPlan.Item], inRoundsOf round: Int) -> [RunPlan.Item] {
        RunExecution.largestFirst(items.map(\.input.byteCount), inRoundsOf: round).map { items[$0] }
    }

    @Test func largerFilesStartFirstAndEqualOnesKeepTheirOrder() {
        let items = [item("small", bytes: 10), item("big", bytes: 1000), item("tie-a", bytes: 500), item("tie-b", bytes: 500)]
        let order = largestFirst(items, inRoundsOf: 4).map(\.input.displayName)
        #expect(order == ["big", "tie-a", "tie-b", "small"])
    }

    @Test func inputsOfUnknownSizeStartLastInListingOrder() {
        let items = [item("url-1", bytes: nil), item("file", bytes: 1), item("url-2", bytes: nil)]
        #expect(largestFirst(items, inRoundsOf: 4).map(\.input.displayName) == ["file", "url-1", "url-2"])
    }

    @Test func copiesOfTheLargestAreSpreadOnePerRoundFromTheStart() {
        let sizes: [Int64] = [900, 700, 500, 300, 100]
        let items = copies(8, ofSizes: sizes)
        let order = largestFirst(items, inRoundsOf: 4)
        let bytes = order.map { $0.input.byteCount ?? -1 }
        #expect(Set(order.map(\.input.displayName)) == Set(items.map(\.input.displayName)))
        #expect(order.count == items.count)
        // Never two copies of one file side by side, the largest least of all.
        #expect(zip(bytes, bytes.dropFirst()).allSatisfy { $0 != $1 })
        // The largest starts first and then once a round, all of it before the last round; the
        // run ends with the smallest.
        let largest = bytes.indices.filter { bytes[$0] == 900 }
        #expect(largest == Array(stride(from: 0, to: 32, by: 4)))
        #expect(bytes.last == 100)
        // Each round is largest first.
        for start in stride(from: 0, to: bytes.count, by: 4) {
            let round = bytes[start..<min(start + 4, bytes.count)]
            #expect(round.elementsEqual(round.sorted(by: >)), "round at \(start): \(Array(round))")
        }
    }

    @Test func unknownSizesFollowTheRoundsInListingOrder() {
        let items = copies(4, ofSizes: [900, 100]) + [item("url-1", bytes: nil), item("url-2", bytes: nil)]
        let order = largestFirst(items, inRoundsOf: 2).map(\.input.displayName)
        #expect(order == ["r1-900", "r1-100", "r2-900", "r2-100", "r3-900", "r3-100", "r4-900", "r4-100", "url-1", "url-2"])
    }
}
