#!/usr/bin/env bash
# Set up .venv (if needed) and run one task: setup | test | demo | bench | bench-full.
# test: ruff, the user guide's strict build (mkdocs), then pytest.
# `make <task>` calls this; it also works on machines without make.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
VENV=.venv
STAMP="$VENV/.installed"

setup() {
  if [ ! -f "$STAMP" ] || [ pyproject.toml -nt "$STAMP" ] || [ constraints.txt -nt "$STAMP" ] \
     || [ privsample/synth/_splitpath.c -nt "$STAMP" ] || [ privsample/synth/_graphcells.c -nt "$STAMP" ] \
     || [ setup.py -nt "$STAMP" ]; then
    [ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
    "$VENV/bin/python" -m pip install -q --upgrade pip
    "$VENV/bin/python" -m pip install -q -c constraints.txt -e ".[test,spark,docs]"
    touch "$STAMP"
  fi
}

task="${1:-test}"; shift || true
setup
case "$task" in
  setup) ;;
  test)
    "$VENV/bin/ruff" check . && "$VENV/bin/ruff" format --check .
    site="$(mktemp -d)"; trap 'rm -rf "$site"' EXIT
    NO_MKDOCS_2_WARNING=1 "$VENV/bin/mkdocs" build --strict --quiet --site-dir "$site"   # the guide: no warnings
    "$VENV/bin/python" -m pytest -q "$@" ;;
  demo) exec "$VENV/bin/privsample" demo -o demo-output "$@" ;;
  bench)
    "$VENV/bin/python" benchmarks/mst_adult.py && "$VENV/bin/python" benchmarks/mbde_paper.py --quick \
      && "$VENV/bin/python" benchmarks/cube_solver.py --quick && "$VENV/bin/python" benchmarks/wide_tables.py --quick
    exec "$VENV/bin/python" benchmarks/ppsyn_paper.py "$@" ;;
  bench-full)
    for b in numpy_md samplers_accuracy engines "mbde_paper --no-finite" "mst_adult --full" aim_adult cube_solver \
             cube_study ppsyn_time wide_tables; do
      # shellcheck disable=SC2086
      "$VENV/bin/python" benchmarks/${b%% *}.py ${b#"${b%% *}"}
    done
    exec "$VENV/bin/python" benchmarks/ppsyn_paper.py --full "$@" ;;
  *) echo "usage: scripts/dev.sh setup|test|demo|bench|bench-full" >&2; exit 2 ;;
esac
