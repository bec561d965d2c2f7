import PipelineCLI
import SepiaProcessor
import StandardProcessors

// `pipeline`, with every built-in step and `sepia`: the same commands, help and exit codes.
await PipelineCLI.main(processors: .standard.adding(Sepia.self))
