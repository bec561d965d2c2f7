// VipsComposite: processors to come.
