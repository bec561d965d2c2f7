import Testing
@testable import PipelineKit

/// libvips' threads per image: one each while images fill the cores, the cores shared out when
/// a run has fewer images than cores.
struct ThreadsPerImageTests {
    @Test(arguments: [
        (threads: 1, inputs: 1, cores: 2, expected: 2),
        (threads: 1, inputs: 1, cores: 8, expected: 8),
        (threads: 1, inputs: 3, cores: 8, expected: 2),
        (threads: 1, inputs: 2, cores: 2, expected: 1),
        (threads: 1, inputs: 500, cores: 2, expected: 1),
        (threads: 4, inputs: 1, cores: 2, expected: 4),
        (threads: 1, inputs: 0, cores: 2, expected: 1),
    ])
    func fewerImagesThanCoresShareTheCores(_ example: (threads: Int, inputs: Int, cores: Int, expected: Int)) {
        #expect(Pipeline.threadsPerImage(example.threads, inputs: example.inputs, cores: example.cores) == example.expected)
    }
}
