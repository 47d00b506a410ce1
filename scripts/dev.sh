#!/usr/bin/env bash
# Set up .venv (if needed) and run one task: setup | test | demo | bench | bench-full | check-fresh.
# test: ruff, the freshness of the stored benchmark results, the user guide's strict build (mkdocs), then pytest.
# `make <task>` calls this; it also works on machines without make.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
VENV=.venv
STAMP="$VENV/.installed"

setup() {
  if [ ! -f "$STAMP" ] || [ pyproject.toml -nt "$STAMP" ] || [ constraints.txt -nt "$STAMP" ] \
     || [ privsample/synth/splitpath.c -nt "$STAMP" ] || [ privsample/synth/graphcells.c -nt "$STAMP" ] \
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
    "$VENV/bin/python" benchmarks/check_fresh.py   # stored results from this code (stamps only, about a second)
    site="$(mktemp -d)"; trap 'rm -rf "$site"' EXIT
    NO_MKDOCS_2_WARNING=1 "$VENV/bin/mkdocs" build --strict --quiet --site-dir "$site"   # the guide: no warnings
    "$VENV/bin/python" -m pytest -q "$@" ;;
  demo) exec "$VENV/bin/privsample" demo -o demo-output "$@" ;;
  bench)
    "$VENV/bin/python" benchmarks/mst_adult.py && "$VENV/bin/python" benchmarks/mbde_paper.py --quick \
      && "$VENV/bin/python" benchmarks/cube_solver.py --quick && "$VENV/bin/python" benchmarks/wide_tables.py --quick
    exec "$VENV/bin/python" benchmarks/ppsyn_paper.py "$@" ;;
  bench-full)
    # Every results file of benchmarks/ from this checkout's code, then the freshness check. The grids that keep
    # finished runs start empty: their previous results move to benchmarks/.cache/previous-results/<time>/.
    old="benchmarks/.cache/previous-results/$(date +%Y%m%d-%H%M%S)"; mkdir -p "$old"
    for f in engines latent_wide method_choice person_level person_level.profiles planner_calibration ppsyn_paper \
             public_data_age public_data_sex register_types small_tables small_tables.quick small_tables_credit \
             wide_discovery wide_tables; do
      if [ -f "benchmarks/results/$f.csv" ]; then mv "benchmarks/results/$f.csv" "$old/"; fi
    done
    while read -r b; do
      [ -n "$b" ] || continue
      echo "== benchmarks/$b" >&2
      # shellcheck disable=SC2086
      "$VENV/bin/python" benchmarks/$b </dev/null
    done <<'RUNS'
numpy_md.py
samplers_accuracy.py
engines.py
engines.py --rows 10000000 --engines duckdb --tasks marginals_sets
engines.py --rows 1000000,3000000 --engines duckdb --tasks discover,reviewed
engines.py --rows 10000000 --engines duckdb --tasks discover,reviewed
engines.py --rows 100000000 --engines duckdb
engines.py --rows 100000000 --engines auto --tasks cli
mbde_paper.py --quick
mbde_paper.py --no-finite
mbde_paper.py --q0-fitted --q0-eps 0.1,1,2,10 --q0-ip-eps 10 --reps 3
mst_adult.py --full
aim_adult.py
cube_solver.py
cube_study.py --same-epsilon
cube_bounds_tables.py
paper_claims.py
ppsyn_time.py
wide_tables.py
latent_wide.py
latent_wide.py --tables latent-50x100000,latent-200x100000 --methods mst
latent_wide.py --tables latent-60x100000 --methods aim --timeout 900
wide_discovery.py
wide_discovery.py --arms none:target_fraction=0.01 --methods mst
small_tables.py --quick
small_tables.py
small_tables.py --credit
discovery_rates.py
numeric_discovery.py
category_threshold.py
structural_zeros.py
privacy_check.py
public_data.py --bias sex
public_data.py --bias age
register_types.py
person_level.py --seeds 0,1,2 --methods mst,aim
person_level.py --tables visits --epsilons 0.3
person_level.py --profiles
method_choice.py
planner.py --calibrate
planner.py --calibrate --tables nltcs,acs
planner.py --calibrate --tables wide-25x100000
planner.py --calibrate --tables wide-50x100000 --methods mst,ppsyn
planner.py
ppsyn_paper.py
ppsyn_paper.py --full
RUNS
    exec "$VENV/bin/python" benchmarks/check_fresh.py --list ;;
  check-fresh) exec "$VENV/bin/python" benchmarks/check_fresh.py "$@" ;;
  *) echo "usage: scripts/dev.sh setup|test|demo|bench|bench-full|check-fresh" >&2; exit 2 ;;
esac
