import PipelineCLI
import StandardProcessors

// `pipeline` is the command line with the built-in processors; a plugin package builds its own
// command the same way, with `.standard.adding(…)`.
await PipelineCLI.main(processors: .standard)
