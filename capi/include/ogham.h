/* The C interface of the Ogham runtime (libogham_c.so, built from capi/: `cargo build -p ogham-capi`).
 *
 * Load a library made by `ogham build FILE -o LIB.ogl` and call its entry points on the CPU
 * backend (all cores):
 *
 *     ogham_library *lib = ogham_load("bfast.ogl");
 *     if (!lib) { fprintf(stderr, "%s\n", ogham_last_error()); return 1; }
 *     int64_t shape[2] = {m, N};
 *     ogham_array args[] = {{OGHAM_F32, 2, shape, images}, ...};
 *     ogham_results *out = ogham_call(lib, "main", args, nargs);
 *     if (!out) { fprintf(stderr, "%s\n", ogham_last_error()); ... }
 *     ogham_array breaks = ogham_result(out, 0);   // valid until ogham_results_free(out)
 *     ogham_results_free(out);
 *     ogham_free(lib);
 *
 * A library compiled ahead of time, `ogham build FILE -o NAME.o`, is an object file with the
 * kernels' machine code (for the CPU of the machine that built it), a header NAME.h and this
 * header beside it; link it into the program with libogham_c (NAME.h's comment has the exact
 * command, e.g. `cc main.c /abs/NAME.o -I/abs -L/lib -Wl,-rpath,/lib -logham_c -lm`) and open
 * it without the JIT:
 *
 *     #include "NAME.h"
 *     ogham_library *lib = ogham_open_image(&NAME_image);
 *
 * Arguments are one `ogham_array` per parameter of the entry point (rank 0 for a scalar; data
 * is row-major and copied by the call). Parameters that are tuples or records are not
 * supported through this interface. Results are the entry point's outputs with tuples spread
 * into their components, in order. Errors (bad arguments, run-time errors such as an index out
 * of bounds, with the source location) make `ogham_load`/`ogham_call` return NULL and
 * `ogham_last_error` describe them; it is per thread and valid until the next call. Booleans
 * are one byte, 0 or 1. Functions are thread-safe; a library may be called concurrently.
 */
#ifndef OGHAM_H
#define OGHAM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  OGHAM_BOOL = 0,
  OGHAM_I8 = 1,
  OGHAM_I16 = 2,
  OGHAM_I32 = 3,
  OGHAM_I64 = 4,
  OGHAM_U8 = 5,
  OGHAM_F32 = 6,
  OGHAM_F64 = 7
} ogham_type;

/* A scalar (rank 0) or a row-major array of `shape[0] * ... * shape[rank-1]` elements. */
typedef struct {
  int32_t type; /* an ogham_type */
  int32_t rank;
  const int64_t *shape;
  void *data;
} ogham_array;

typedef struct ogham_library ogham_library;
typedef struct ogham_results ogham_results;

/* What an object made by `ogham build FILE -o NAME.o` exports as `NAME_image` (its fields are
 * for the runtime; the layout is checked when the image is opened). */
typedef struct {
  uint64_t version;
  uint64_t build;
  const unsigned char *library;
  uint64_t library_len;
  const char *cpu_features;
  uint64_t kernel_count;
  const void *const *kernels;
} ogham_image;

/* Loads a compiled library (a `.ogl` file); NULL on error. */
ogham_library *ogham_load(const char *path);
/* Opens a library compiled ahead of time and linked into the program; NULL on error (an
 * object made by another version of Ogham, or for a CPU with features this one lacks). */
ogham_library *ogham_open_image(const ogham_image *image);
void ogham_free(ogham_library *lib);

/* The number of entry points and the name of entry point `i` (valid while `lib` lives). */
size_t ogham_entry_count(const ogham_library *lib);
const char *ogham_entry_name(const ogham_library *lib, size_t i);

/* Runs entry point `entry` on `nargs` arguments; NULL on error. */
ogham_results *ogham_call(ogham_library *lib, const char *entry, const ogham_array *args,
                          size_t nargs);
size_t ogham_results_count(const ogham_results *results);
/* Result `i` (a view into `results`; {.rank = -1} if `i` is out of range). */
ogham_array ogham_result(const ogham_results *results, size_t i);
void ogham_results_free(ogham_results *results);

/* The message of this thread's last failed call. */
const char *ogham_last_error(void);

#ifdef __cplusplus
}
#endif

#endif
