// VipsGeometry: processors to come.
