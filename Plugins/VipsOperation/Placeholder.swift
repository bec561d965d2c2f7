// VipsOperation: processors to come.
