/* Calls BFAST-Monitor (`main` of programs/bfast.og) from C through libogham_c, with the
 * library compiled ahead of time (bfast.o, linked in) or, given a .ogl file, JIT-compiled at
 * the first call (later calls reuse the code); used by `benches/run.py --only aot`.
 *
 *   bfast_call STACK.npy n reps BREAKS.i32 [LIB.ogl]
 *
 * STACK.npy: a little-endian f32 array [m][N] in C order. Prints `open MS` once and `call MS`
 * per repetition; writes the first call's break indices (int32, raw) to BREAKS.i32. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "bfast.h"

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

/* Reads a 2-D f32 .npy file; NULL (and a message) if it is not one. */
static float *read_npy(const char *path, int64_t shape[2]) {
  FILE *f = fopen(path, "rb");
  unsigned char head[10];
  if (!f || fread(head, 1, 10, f) != 10 || memcmp(head, "\x93NUMPY", 6) != 0 || head[6] != 1) {
    fprintf(stderr, "%s: not a version-1 .npy file\n", path);
    return NULL;
  }
  size_t len = head[8] | (size_t)head[9] << 8;
  char *dict = calloc(len + 1, 1);
  const char *at = NULL;
  long long m = 0, n = 0;
  if (fread(dict, 1, len, f) != len || !strstr(dict, "'descr': '<f4'") ||
      !strstr(dict, "'fortran_order': False") || !(at = strstr(dict, "'shape': (")) ||
      sscanf(at, "'shape': (%lld, %lld)", &m, &n) != 2) {
    fprintf(stderr, "%s: expected a C-order [m][N] f32 array\n", path);
    return NULL;
  }
  free(dict);
  shape[0] = m;
  shape[1] = n;
  float *data = malloc((size_t)(m * n) * sizeof(float));
  if (fread(data, sizeof(float), (size_t)(m * n), f) != (size_t)(m * n)) {
    fprintf(stderr, "%s: short file\n", path);
    return NULL;
  }
  fclose(f);
  return data;
}

int main(int argc, char **argv) {
  if (argc < 5) {
    fprintf(stderr, "usage: %s STACK.npy n reps BREAKS.i32 [LIB.ogl]\n", argv[0]);
    return 2;
  }
  int64_t shape[2];
  float *images = read_npy(argv[1], shape);
  if (!images) return 1;
  int64_t n = atoll(argv[2]), k = 3, end = 10;
  int reps = atoi(argv[3]);
  double freq = 23, start = 2000, h = 0.25, level = 0.05, lambda = NAN;
  uint8_t trend = 1;
  ogham_array args[] = {
      {OGHAM_F32, 2, shape, images},  {OGHAM_I64, 0, NULL, &n},     {OGHAM_F64, 0, NULL, &freq},
      {OGHAM_F64, 0, NULL, &start},   {OGHAM_I64, 0, NULL, &k},     {OGHAM_BOOL, 0, NULL, &trend},
      {OGHAM_F64, 0, NULL, &h},       {OGHAM_I64, 0, NULL, &end},   {OGHAM_F64, 0, NULL, &level},
      {OGHAM_F64, 0, NULL, &lambda}};

  double t = now_ms();
  ogham_library *lib = argc > 5 ? ogham_load(argv[5]) : ogham_open_image(&bfast_image);
  if (!lib) {
    fprintf(stderr, "cannot open the library: %s\n", ogham_last_error());
    return 1;
  }
  printf("open %.2f\n", now_ms() - t);
  for (int rep = 0; rep < reps; rep++) {
    t = now_ms();
    ogham_results *out = ogham_call(lib, "main", args, sizeof args / sizeof args[0]);
    double ms = now_ms() - t;
    if (!out) {
      fprintf(stderr, "the call failed: %s\n", ogham_last_error());
      return 1;
    }
    printf("call %.2f\n", ms);
    if (rep == 0) {
      FILE *o = fopen(argv[4], "wb");
      fwrite(ogham_result(out, 0).data, sizeof(int32_t), (size_t)shape[0], o);
      fclose(o);
    }
    ogham_results_free(out);
  }
  ogham_free(lib);
  free(images);
  return 0;
}
