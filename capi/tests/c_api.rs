//! A C program calls a compiled library through `include/ogham.h` and `libogham_c.so`: results,
//! entry-point listing, and the errors of bad arguments and of a run-time check (with its
//! source location); once with the library as a `.ogl` file (JIT), once compiled ahead of time
//! into an object file linked into the program, whose damaged images (another build of the compiler, a
//! damaged or truncated library, another format version, missing CPU features) are refused, and
//! whose damaged entry points (a changed byte, a wrong kernel count) fail at their call; and, given
//! a library built without the JIT (`OGHAM_CAPI_NO_JIT_DIR`), the object through it. Needs a C
//! compiler (`cc`); CI has one.

use ogham::Frontend;
use ogham::codegen::cpu::CPU;
use ogham_compiler::pipeline::Options;
use ogham_runtime::cpu::aot;
use ogham_runtime::library::Library;
use std::path::{Path, PathBuf};
use std::process::Command;

const PROGRAM: &str = "\
entry scale [n] (xs: [n]f32) (k: f32) : ([n]f32, f32) = (map (*k) xs, reduce (+) 0 xs)
entry pick [n] (xs: [n]i64) (i: i64) : i64 = xs[i]
";

const C_PROGRAM: &str = r#"
#include <stdio.h>
#include <string.h>
#include "ogham.h"
#ifdef IMAGE
#include "capi.h"
#define OPEN(path) ogham_open_image(&capi_image)
#else
#define OPEN(path) ogham_load(path)
#endif

/* The first line of `text` (a rendered diagnostic's headline). */
static const char *first_line(const char *text) {
  static char line[512];
  size_t n = strcspn(text, "\n");
  if (n >= sizeof line) n = sizeof line - 1;
  memcpy(line, text, n);
  line[n] = 0;
  return line;
}

int main(int argc, char **argv) {
  ogham_library *lib = OPEN(argv[1]);
  if (!lib) { printf("load failed: %s\n", ogham_last_error()); return 1; }
  for (size_t i = 0; i < ogham_entry_count(lib); i++) printf("entry %s\n", ogham_entry_name(lib, i));

  float xs[3] = {1, 2, 3};
  float k = 2;
  int64_t n = 3;
  ogham_array args[2] = {{OGHAM_F32, 1, &n, xs}, {OGHAM_F32, 0, NULL, &k}};
  ogham_results *out = ogham_call(lib, "scale", args, 2);
  if (!out) { printf("call failed: %s\n", ogham_last_error()); return 1; }
  printf("results %zu\n", ogham_results_count(out));
  ogham_array ys = ogham_result(out, 0);
  ogham_array sum = ogham_result(out, 1);
  printf("ys rank %d shape %lld type %d: %g %g %g\n", ys.rank, (long long)ys.shape[0], ys.type,
         ((float *)ys.data)[0], ((float *)ys.data)[1], ((float *)ys.data)[2]);
  printf("sum rank %d: %g\n", sum.rank, *(float *)sum.data);
  ogham_results_free(out);

  /* A run-time error: index 5 of a 3-element array. */
  int64_t is[3] = {10, 20, 30};
  int64_t at = 5;
  ogham_array pargs[2] = {{OGHAM_I64, 1, &n, is}, {OGHAM_I64, 0, NULL, &at}};
  out = ogham_call(lib, "pick", pargs, 2);
  printf("pick 5: %s\n", out ? "ok?" : (strstr(ogham_last_error(), "R0702") ? "R0702" : ogham_last_error()));
  at = 1;
  out = ogham_call(lib, "pick", pargs, 2);
  printf("pick 1: %lld\n", out ? (long long)*(int64_t *)ogham_result(out, 0).data : -1LL);
  ogham_results_free(out);

  /* A wrong argument type, an unknown entry point. */
  ogham_array bad[2] = {{OGHAM_F64, 1, &n, is}, {OGHAM_I64, 0, NULL, &at}};
  printf("bad type: %s\n", ogham_call(lib, "pick", bad, 2) ? "ok?" : "error");
  printf("no entry: %s\n", ogham_call(lib, "nope", pargs, 2) ? "ok?" : ogham_last_error());
  ogham_free(lib);
  printf("missing file: %s\n", ogham_load("/nonexistent.ogl") ? "ok?" : "error");
#ifdef IMAGE
  printf("null: %s\n", ogham_open_image(NULL) ? "ok?" : ogham_last_error());
  ogham_image damaged = capi_image;
  damaged.build ^= 1;
  printf("build: %s\n", ogham_open_image(&damaged) ? "ok?" : ogham_last_error());
  unsigned char copy[1 << 16];
  if (capi_image.library_len > sizeof copy) return 1;
  memcpy(copy, capi_image.library, capi_image.library_len);
  copy[20] ^= 1; /* in the skeleton */
  damaged = capi_image;
  damaged.library = copy;
  printf("skeleton: %s\n", ogham_open_image(&damaged) ? "ok?" : ogham_last_error());
  copy[20] ^= 1;
  copy[capi_image.library_len - 1] ^= 1; /* in the last entry point's texts */
  lib = ogham_open_image(&damaged);
  out = lib ? ogham_call(lib, "pick", pargs, 2) : NULL;
  printf("entry text: %s\n", out ? "ok?" : first_line(ogham_last_error()));
  printf("other entry: %s\n", lib && ogham_call(lib, "scale", args, 2) ? "ok" : "failed");
  damaged = capi_image;
  damaged.library_len -= 1;
  printf("truncated: %s\n", ogham_open_image(&damaged) ? "ok?" : ogham_last_error());
  damaged = capi_image;
  damaged.version = 99;
  printf("version: %s\n", ogham_open_image(&damaged) ? "ok?" : ogham_last_error());
  damaged = capi_image;
  damaged.cpu_features = "has_sse3,has_imaginary";
  printf("features: %s\n", ogham_open_image(&damaged) ? "ok?" : ogham_last_error());
  damaged = capi_image;
  damaged.kernel_count = 0;
  lib = ogham_open_image(&damaged);
  out = lib ? ogham_call(lib, "scale", args, 2) : NULL;
  printf("count: %s\n", out ? "ok?" : first_line(ogham_last_error()));
#endif
  return 0;
}
"#;

/// The directory holding `libogham_c.so` (next to this test's executable).
fn library_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test's path");
    let deps = exe.parent().expect("target/<profile>/deps");
    [deps, deps.parent().expect("target/<profile>")]
        .into_iter()
        .find(|d| d.join("libogham_c.so").exists())
        .expect("cargo builds libogham_c.so before the tests")
        .to_path_buf()
}

/// The C program's output with either library.
const OUTPUT: &str = "entry scale\nentry pick\nresults 2\nys rank 1 shape 3 type 6: 2 4 6\n\
                      sum rank 0: 6\npick 5: R0702\npick 1: 20\nbad type: error\n\
                      no entry: the library has no entry point `nope` (it has: scale, pick)\n\
                      missing file: error\n";

/// Compiles `main.c` in `dir` with `defines` and `objects` against `libogham_c` in `libs`,
/// runs it with `arg`; whether it succeeded, and its output.
fn compile_and_run_with(
    libs: &Path,
    dir: &Path,
    defines: &[&str],
    objects: &[PathBuf],
    arg: &Path,
) -> (bool, String) {
    let c_file = dir.join("main.c");
    std::fs::write(&c_file, C_PROGRAM).unwrap();
    let exe = dir.join("main");
    let include = Path::new(env!("CARGO_MANIFEST_DIR")).join("include");
    let cc = Command::new("cc")
        .arg("-o")
        .arg(&exe)
        .args(defines.iter().map(|d| format!("-D{d}")))
        .arg(&c_file)
        .args(objects)
        .arg(format!("-I{}", include.display()))
        .arg(format!("-I{}", dir.display()))
        .arg(format!("-L{}", libs.display()))
        .arg(format!("-Wl,-rpath,{}", libs.display()))
        .arg("-logham_c")
        .arg("-lm")
        .output()
        .expect("a C compiler (cc)");
    assert!(
        cc.status.success(),
        "{}",
        String::from_utf8_lossy(&cc.stderr)
    );
    // `cargo test` puts its own library directories first in `LD_LIBRARY_PATH`, which would
    // win over the program's `-rpath`.
    let run = Command::new(&exe)
        .arg(arg)
        .env("LD_LIBRARY_PATH", libs)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout).to_string();
    assert!(
        run.status.code().is_some(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&run.stderr)
    );
    (run.status.success(), stdout)
}

/// [`compile_and_run_with`] this build's `libogham_c`, which must succeed; its output.
fn compile_and_run(dir: &Path, defines: &[&str], objects: &[PathBuf], arg: &Path) -> String {
    let (ok, stdout) = compile_and_run_with(&library_dir(), dir, defines, objects, arg);
    assert!(ok, "{stdout}");
    stdout
}

fn library(dir: &Path) -> Library {
    std::fs::create_dir_all(dir).unwrap();
    let fe = Frontend::load_source("capi.og", PROGRAM).unwrap_or_else(|e| panic!("{}", e.render()));
    let ir = fe
        .compile_kernel(Options::KERNEL)
        .expect("the program compiles");
    Library::new(fe.sources.clone(), ir, CPU)
}

#[test]
fn a_c_program_calls_a_compiled_library() {
    let dir = std::env::temp_dir().join(format!("ogham-capi-{}", std::process::id()));
    let lib_path = dir.join("capi.ogl");
    library(&dir).save(&lib_path).unwrap();
    assert_eq!(compile_and_run(&dir, &[], &[], &lib_path), OUTPUT);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_c_program_calls_a_library_compiled_ahead_of_time() {
    calls_an_object_through(&library_dir(), "aot");
}

/// With `OGHAM_CAPI_NO_JIT_DIR` naming the directory of a `libogham_c.so` built without the JIT
/// (`cargo build --release -p ogham-capi --no-default-features`: neither the compiler nor
/// Cranelift in it), the C program runs an object compiled ahead of time as with the default
/// library, and a `.ogl` file is refused with R0713. Without the variable there is nothing to
/// run: `cargo test` builds the default library only (docs/testing.md).
#[test]
fn the_library_without_the_jit_runs_objects_and_refuses_ogl_files() {
    let Some(libs) = std::env::var_os("OGHAM_CAPI_NO_JIT_DIR") else {
        return;
    };
    let libs = std::fs::canonicalize(libs).expect("OGHAM_CAPI_NO_JIT_DIR exists");
    calls_an_object_through(&libs, "nojit");
    let dir = std::env::temp_dir().join(format!("ogham-capi-nojit-ogl-{}", std::process::id()));
    let lib_path = dir.join("capi.ogl");
    library(&dir).save(&lib_path).unwrap();
    let (ok, stdout) = compile_and_run_with(&libs, &dir, &[], &[], &lib_path);
    assert!(!ok);
    assert_eq!(
        stdout,
        format!(
            "load failed: error[R0713]: {} needs the JIT, which this runtime was built without \
             (the `jit` feature): it runs libraries compiled ahead of time (`ogham build FILE -o \
             NAME.o`, opened with `ogham_open_image`)\n",
            lib_path.display()
        )
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The C program with an object compiled ahead of time, against `libogham_c` in `libs`: its
/// results and errors, and those of damaged images.
fn calls_an_object_through(libs: &Path, tag: &str) {
    let dir = std::env::temp_dir().join(format!("ogham-capi-{tag}-{}", std::process::id()));
    let object = dir.join("capi.o");
    std::fs::write(&object, library(&dir).object("capi").unwrap()).unwrap();
    let signatures = ["entry scale ...".to_string(), "entry pick ...".to_string()];
    let build = aot::build_line(&object, Some(libs));
    std::fs::write(
        dir.join("capi.h"),
        aot::c_header("capi", "capi.og", &signatures, &build),
    )
    .unwrap();
    let (ok, stdout) = compile_and_run_with(libs, &dir, &["IMAGE"], &[object], Path::new("unused"));
    assert!(ok, "{stdout}");
    let rebuild = "rebuild the object with this runtime's version of `ogham build`";
    let damaged = |why: &str| format!("the image's library is damaged ({why}): {rebuild}");
    let build = ogham_runtime::build_id();
    let other = build ^ 1;
    assert_eq!(
        stdout,
        format!(
            "{OUTPUT}null: the image is NULL\n\
             build: the object was made by another build of the compiler ({other:016x}; this \
             runtime is {build:016x}): {rebuild}\n\
             skeleton: {}\n\
             entry text: error[R0708]: the library's entry point `pick` is damaged (it does not \
             match its hash)\n\
             other entry: ok\n\
             truncated: {}\n\
             version: the image is of version 99; this runtime reads version 3 (rebuild the \
             object with this version's `ogham build`)\n\
             features: the object was compiled for a CPU with features this one lacks \
             (has_imaginary); build it on this machine\n\
             count: error[R0708]: the image's kernel table does not match its program: \
             {rebuild}\n",
            damaged("its contents do not match their hash"),
            damaged("an entry point's text outside the bytes"),
        )
    );
    assert!(library(&dir).object("9lives").is_err());
    let _ = std::fs::remove_dir_all(&dir);
}

/// The build command in a generated header works as written: `ogham.h` beside the header, the
/// object and `libogham_c` found, the program runs.
#[test]
fn the_build_line_in_the_generated_header_works_as_written() {
    let dir = std::env::temp_dir().join(format!("ogham-capi-line-{}", std::process::id()));
    let object = dir.join("capi.o");
    std::fs::write(&object, library(&dir).object("capi").unwrap()).unwrap();
    let build = aot::build_line(&object, Some(&library_dir()));
    let header = aot::c_header("capi", "capi.og", &[], &build);
    std::fs::write(dir.join("capi.h"), &header).unwrap();
    std::fs::write(dir.join("ogham.h"), aot::OGHAM_H).unwrap();
    std::fs::write(
        dir.join("main.c"),
        "#include <stdio.h>\n#include \"capi.h\"\nint main(void) {\n  ogham_library *lib = \
         ogham_open_image(&capi_image);\n  if (!lib) { printf(\"%s\\n\", ogham_last_error()); \
         return 1; }\n  printf(\"opened\\n\");\n  ogham_free(lib);\n  return 0;\n}\n",
    )
    .unwrap();
    let line = header
        .lines()
        .find_map(|l| l.strip_prefix(" *   cc "))
        .expect("the header has a build line");
    let cc = Command::new("sh")
        .arg("-c")
        .arg(format!("cc {line}"))
        .current_dir(&dir)
        .output()
        .expect("a shell");
    assert!(
        cc.status.success(),
        "{}",
        String::from_utf8_lossy(&cc.stderr)
    );
    // As a user runs it: the build line's `-rpath` finds the library, not the directories
    // `cargo test` puts in `LD_LIBRARY_PATH` (where a stale copy may lie).
    let run = Command::new(dir.join("a.out"))
        .env_remove("LD_LIBRARY_PATH")
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&run.stdout), "opened\n");
    let _ = std::fs::remove_dir_all(&dir);
}
