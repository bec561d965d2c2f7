// VipsColour: processors to come.
