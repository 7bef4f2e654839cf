"""NVRTC's time on one entry point's kernels, as the CUDA runtime compiles them: one translation
unit of them all (the runtime before 2026-11-30) or one unit per kernel after the prelude plus
the data kernels' unit (`CudaProgram::units`), compiled by THREADS threads. Times are the CPU
seconds of the compiling thread (`time.thread_time`: the machine is shared), plus the wall time
of the threaded compilation. NVRTC 12, `sm_90` and the runtime's options (`nvrtc.rs`);
`libnvrtc.so.12` is found through LD_LIBRARY_PATH.

    ogham dev --print cuda programs/bfast.og > bfast.cu
    python3 benches/nvrtc_units.py bfast.cu main 2 both
"""

import ctypes
import re
import sys
import threading
import time

NVRTC = ctypes.CDLL("libnvrtc.so.12")
OPTIONS = [b"--gpu-architecture=sm_90", b"--std=c++17", b"--fmad=false", b"-diag-suppress=177,550"]


def compile_seconds(source):
    """The CPU seconds NVRTC takes on `source` (to a CUBIN)."""
    prog = ctypes.c_void_p()
    assert NVRTC.nvrtcCreateProgram(ctypes.byref(prog), source.encode(), b"ogham.cu", 0, None, None) == 0
    options = (ctypes.c_char_p * len(OPTIONS))(*OPTIONS)
    start = time.thread_time()
    status = NVRTC.nvrtcCompileProgram(prog, len(OPTIONS), options)
    seconds = time.thread_time() - start
    NVRTC.nvrtcDestroyProgram(ctypes.byref(prog))
    assert status == 0, f"NVRTC failed ({status})"
    return seconds


def units(text, entry):
    """The whole entry point's unit, and its units as the runtime makes them."""
    data = text.index("// ---- Data kernels")
    end = text.index("// ---- end of prelude ----\n") + len("// ---- end of prelude ----\n")
    prelude, data_kernels = text[:data], text[data:end]
    segs = re.split(r"(?m)^(?=// kernel )", text[end + 1 :])
    mine = [s for s in segs if re.match(r"// kernel %s_k\d+[ :]" % re.escape(entry), s)]
    generated = [s for s in mine if "not generated" not in s.split("\n")[0]]
    whole = prelude + data_kernels + "\n" + "".join(mine)
    return whole, [prelude + data_kernels] + [prelude + "\n" + s for s in generated]


def main():
    path, entry, threads, mode = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    whole, split = units(open(path).read(), entry)
    if mode in ("both", "whole"):
        print(f"{path} {entry}: one unit ({len(whole)} bytes): {compile_seconds(whole):.1f} CPU s", flush=True)
    if mode in ("both", "split"):
        seconds, nxt, lock = [0.0] * len(split), [0], threading.Lock()

        def work():
            while True:
                with lock:
                    k = nxt[0]
                    nxt[0] += 1
                if k >= len(split):
                    return
                seconds[k] = compile_seconds(split[k])

        start = time.time()
        workers = [threading.Thread(target=work) for _ in range(threads)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        print(
            f"{path} {entry}: {len(split)} units on {threads} threads: {time.time() - start:.1f} s wall, "
            f"{sum(seconds):.1f} CPU s in all, largest {max(seconds):.1f} CPU s",
            flush=True,
        )


if __name__ == "__main__":
    main()
