import TestSupport
import Testing

@testable import PipelineKit

/// The order inputs start in: largest first, ties and unknown sizes in listing order.
struct LargestFirstTests {
    private func item(_ name: String, bytes: Int64?) -> RunPlan.Item {
        let input = InputFile(path: "/in/" + name, displayName: name, subfolder: "", byteCount: bytes)
        return RunPlan.Item(listings: [RunPlan.Listing(input: input, targets: [], refusal: nil, sameAs: nil)])
    }

    @Test func largerFilesStartFirstAndEqualOnesKeepTheirOrder() {
        let items = [item("small", bytes: 10), item("big", bytes: 1000), item("tie-a", bytes: 500), item("tie-b", bytes: 500)]
        let order = RunExecution.largestFirst(items).map(\.input.displayName)
        #expect(order == ["big", "tie-a", "tie-b", "small"])
    }

    @Test func inputsOfUnknownSizeStartLastInListingOrder() {
        let items = [item("url-1", bytes: nil), item("file", bytes: 1), item("url-2", bytes: nil)]
        #expect(RunExecution.largestFirst(items).map(\.input.displayName) == ["file", "url-1", "url-2"])
    }
}
