/*
 * ISA-L's inflate (igzip): a zlib stream inflated piece by piece, as fast as libdeflate
 * inflates it whole (measured on the PNG corpus' largest files: zlib 0.25 s, libdeflate 0.13 s,
 * ISA-L in 64 KiB pieces 0.15 s). pipeline decodes large PNGs' rows ahead of the resize with it
 * (see Sources/Vips/VipsImage+PNGRows.swift). Debian: libisal-dev.
 */
#ifndef PIPELINE_CISAL_SHIM_H
#define PIPELINE_CISAL_SHIM_H

#include <isa-l/igzip_lib.h>

#endif
