# privsample: `make demo` (set up .venv + run the main job on bundled data), `make test` (set up + run tests),
# `make bench-full` (regenerate every benchmark result), `make check-fresh` (are the stored results from this code?).
# Each target creates .venv as needed; scripts/dev.sh does the work (usable without make).
.PHONY: setup demo test bench bench-full check-fresh clean

setup:
	./scripts/dev.sh setup
demo:
	./scripts/dev.sh demo
test:
	./scripts/dev.sh test
bench:
	./scripts/dev.sh bench
bench-full:
	./scripts/dev.sh bench-full
check-fresh:
	./scripts/dev.sh check-fresh --list
clean:
	rm -rf .venv demo-output .pytest_cache
