/*
 * ISA-L's inflate (igzip): a zlib stream inflated piece by piece at about the speed libdeflate
 * inflates it whole, about twice zlib's (the README's gigapixel PNG). pipeline decodes large
 * PNGs' rows ahead of the resize with it (see
 * Sources/Vips/VipsImage+PNGRows.swift). Debian: libisal-dev.
 */
#ifndef PIPELINE_CISAL_SHIM_H
#define PIPELINE_CISAL_SHIM_H

#include <isa-l/igzip_lib.h>

#endif
