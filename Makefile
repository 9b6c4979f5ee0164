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

lint: deps
	$(CARGO) fmt --all --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings

bench: release
	@scripts/install-deps.sh --bench
	target/release/gpuheat-bench
	target/release/gpuheat-bench --viewer
	target/release/gpuheat-bench --analysis
