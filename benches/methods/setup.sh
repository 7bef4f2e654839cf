#!/usr/bin/env bash
# The environment of benches/methods/bench.py: a virtual environment benches/methods/.venv
# (OGHAM_METHODS_VENV overrides it) with numba and NumPy, pinned in requirements.txt here.
set -euo pipefail
cd "$(dirname "$0")/../.."
VENV="${OGHAM_METHODS_VENV:-$PWD/benches/methods/.venv}"
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -r benches/methods/requirements.txt
"$VENV/bin/python" -c "import numba, numpy; print('numba', numba.__version__, 'numpy', numpy.__version__)"
