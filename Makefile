# The two commands a newcomer runs: `make demo` and `make test`. Both install what is missing.
# A cargo new enough for the workspace (install-deps.sh knows the minimum): the one on PATH,
# rustup's, or Debian 12's cargo-web. Expanded when a recipe runs, so after `deps`.
CARGO ?= $(shell scripts/install-deps.sh --print-cargo)

.PHONY: deps build release demo test lint bench

deps:
	@scripts/install-deps.sh

build: deps
	$(CARGO) build --workspace

release: deps
	$(CARGO) build --workspace --release

demo: release
	@scripts/demo.sh

# Tests spawn GL programs and time draws: run them one at a time so they do not compete for
# the CPU that llvmpipe renders with.
test: build
	$(CARGO) test --workspace -- --test-threads=1

# check-deps.py: the crate dependency rules of docs/ARCHITECTURE.md and no import circle
# inside a crate (python3, standard library only).
lint: deps
	$(CARGO) fmt --all --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings
	python3 scripts/check-deps.py --self-test
	CARGO=$(CARGO) python3 scripts/check-deps.py

bench: release
	@scripts/install-deps.sh --bench
	target/release/gpuheat-bench
	target/release/gpuheat-bench --viewer
	target/release/gpuheat-bench --analysis
