#!/usr/bin/env bash
# The environment of the Python benchmarks (benches/python/*.py): a virtual environment
# benches/python/.venv (OGHAM_BENCH_VENV overrides it) with the pinned test requirements, the
# ogham package built in release mode, and the peer zeit-cdts 2.2.0 (see requirements.txt here
# for why it is installed without its declared dependencies).
#
#     benches/python/setup.sh
#     benches/python/.venv/bin/python benches/python/dask_bfast.py --size 512 512 256 --zeit
set -euo pipefail
cd "$(dirname "$0")/../.."
VENV="${OGHAM_BENCH_VENV:-$PWD/benches/python/.venv}"
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
  -r python/requirements.txt -r benches/python/requirements.txt
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps zeit-cdts==2.2.0
(cd python && VIRTUAL_ENV="$VENV" PYO3_PYTHON="$VENV/bin/python" \
  "$VENV/bin/maturin" develop --release --locked --quiet)
"$VENV/bin/python" -c "import ogham, zeit; print('ogham', ogham.__file__); print('zeit', zeit.__file__)"
