/* Benchmarks/avif-settings.sh's encoder: a PNG encoded by libvips' heifsave or by the pipeline's libavif
 * shim (Sources/CAvif/shim.h); writes the file and prints its bytes, CPU seconds (the process,
 * every thread) and wall seconds. */
#include <vips/vips.h>
#include <sys/resource.h>
#include <stdlib.h>
#include "shim.h" /* Sources/CAvif/shim.h: the encode the pipeline runs */

static double cpu(void) { struct rusage u; getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_utime.tv_usec/1e6 + u.ru_stime.tv_sec + u.ru_stime.tv_usec/1e6; }
static double wall(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec/1e9; }

int main(int argc, char **argv) {
  /* bench IN OUT heif Q EFFORT | bench IN OUT avif CODEC SPEED QUANT THREADS TILEC TILER [OPTIONS] [444] */
  if (VIPS_INIT(argv[0])) return 1;
  vips_concurrency_set(1);
  VipsImage *in = vips_image_new_from_file(argv[1], "access", VIPS_ACCESS_RANDOM, NULL);
  if (!in) { fprintf(stderr, "%s\n", vips_error_buffer()); return 1; }
  size_t n; void *mem = vips_image_write_to_memory(in, &n);
  VipsImage *img = vips_image_new_from_memory(mem, n, in->Xsize, in->Ysize, in->Bands, in->BandFmt);
  img->Type = VIPS_INTERPRETATION_sRGB;
  double c0 = cpu(), w0 = wall();
  void *buf = NULL; size_t len = 0;
  if (!strcmp(argv[3], "heif")) {
    if (vips_heifsave_buffer(img, &buf, &len, "Q", atoi(argv[4]), "effort", atoi(argv[5]), "compression", VIPS_FOREIGN_HEIF_COMPRESSION_AV1, "strip", TRUE, NULL)) {
      fprintf(stderr, "%s\n", vips_error_buffer()); return 1; }
  } else {
    PlAVIFSettings s = {0};
    s.codec = avifCodecChoiceFromName(argv[4]);
    s.speed = atoi(argv[5]); s.quantizer = atoi(argv[6]); s.threads = atoi(argv[7]);
    s.tile_cols_log2 = atoi(argv[8]); s.tile_rows_log2 = atoi(argv[9]);
    s.codec_options = argc > 10 && argv[10][0] ? argv[10] : NULL;
    s.full_chroma = argc > 11 && !strcmp(argv[11], "444");
    s.lossless = argc > 11 && !strcmp(argv[11], "lossless");
    avifRWData out = AVIF_DATA_EMPTY; char msg[256];
    avifResult r = pl_avif_encode(mem, in->Xsize, in->Ysize, in->Bands, in->Xsize * in->Bands, &s, NULL, 0, NULL, 0, NULL, 0, &out, msg, sizeof msg);
    if (r != AVIF_RESULT_OK) { fprintf(stderr, "avif: %s\n", msg); return 1; }
    buf = out.data; len = out.size;
  }
  double c1 = cpu(), w1 = wall();
  FILE *f = fopen(argv[2], "wb"); fwrite(buf, 1, len, f); fclose(f);
  printf("%zu %.3f %.3f\n", len, c1 - c0, w1 - w0);
  return 0;
}
