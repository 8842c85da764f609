# sharebench: the two commands of the README are `make demo` and `make test`.
SHELL := /bin/bash
export PATH := $(HOME)/.cargo/bin:$(PATH)
CARGO ?= cargo
BIN := target/release/sharebench

.PHONY: deps build demo test lint bench clean

deps:
	@scripts/install-deps.sh

build: deps
	$(CARGO) build --release --locked

# The main job. Until the studies land: tmpfs against a disk directory, then the report.
DEMO_OUT := sharebench-results/demo-$(shell date -u +%Y%m%dT%H%M%SZ)
demo: build
	$(BIN) run --file-sizes 1m,16m,64m --record-sizes 4k,64k,1m --reps 3 --out $(DEMO_OUT) /dev/shm /var/tmp
	$(BIN) report $(DEMO_OUT) --baseline /dev/shm --out $(DEMO_OUT)/report
	@echo "Report: $(CURDIR)/$(DEMO_OUT)/report/report.html"

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --release --locked --all-targets -- -D warnings

# Every test: unit tests, then integration tests against tmpfs and loop-mounted images.
test: deps lint
	$(CARGO) test --release --locked --workspace

# Side-by-side ratios against fio, measured in one run.
bench: build
	scripts/bench.sh

clean:
	$(CARGO) clean
