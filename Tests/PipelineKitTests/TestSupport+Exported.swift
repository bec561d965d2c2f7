// Test files written before the shared helpers became the TestSupport module use its fixtures
// without importing it; this keeps them compiling. New files import TestSupport themselves.
@_exported import TestSupport
