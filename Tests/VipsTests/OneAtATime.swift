import Testing

/// libvips keeps one error buffer for the whole process, and reading a failure's message clears
/// it: suites that fail reads on purpose and check what libvips says run one test at a time,
/// so that one test's failure does not take another's message (a TIFF strip test once read
/// "write_to_memory failed" without its strip's number, its message taken by a PNG test).
@Suite(.serialized) enum OneAtATime {}
