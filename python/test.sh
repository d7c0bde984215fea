#!/usr/bin/env bash
# Build the Python package into a virtual environment and run its tests:
# pytest (DataFrames vs the CLI's CSVs, determinism, errors, sweeps on
# threads, processes and a real Dask scheduler with two workers on
# 127.0.0.1) and the example notebooks in examples/. Installs from PyPI only.
#
#   python/test.sh            # venv in target/pyvenv (AQMLAB_VENV overrides)
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
venv=${AQMLAB_VENV:-target/pyvenv}
py=${PYTHON:-python3}
[ -x "$venv/bin/python" ] || "$py" -m venv "$venv"
venv=$(cd "$venv" && pwd)
export PATH="$venv/bin:$PATH"   # maturin's build hook looks for `maturin` on PATH
"$venv/bin/python" -m pip install -q --disable-pip-version-check maturin
# The package and its test extras (pytest, dask[distributed], nbclient, ...).
"$venv/bin/python" -m pip install -q --disable-pip-version-check --no-build-isolation './python[test]'
installed=$(date +%s)
echo "python: venv and package installed in $((installed - start)) s"

# The README's one-liner, from the repository root.
"$venv/bin/python" -c "import aqmlab; print(aqmlab.run('scenarios/aqm-compare.toml').flows.head())"

(cd python && ruff check . ../examples && ruff format --check . ../examples)
# The ns-3 kit's scripts, under ruff's default rules (they are not part of the package).
(cd validation/ns3 && ruff check . && ruff format --check .)

# The tests compare against the CLI built from this checkout.
cargo build --release --locked -q -p aqmlab-cli
# Both test suites run even when the first fails (its failures are not
# allowed to hide the second's); the script fails if either did.
failed=0
# `pytest`, not `python -m pytest`: the latter puts python/ on sys.path, where
# the source tree of the package (without its built extension) would shadow
# the installed one.
(cd python && AQMLAB_CLI="$PWD/../target/release/aqmlab" "$venv/bin/pytest" -q tests) || failed=1
# The ns-3 kit's replicate machinery (needs no ns-3: starts, TOMLs, results file, verdicts).
(cd validation/ns3 && "$venv/bin/pytest" -q -p no:cacheprovider test_kit.py) || failed=1
echo "python: tests took $(($(date +%s) - installed)) s, $(($(date +%s) - start)) s in all"
exit "$failed"
