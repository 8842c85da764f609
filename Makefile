# sharebench: the two commands of the README are `make demo` and `make test`.
SHELL := /bin/bash
export PATH := $(HOME)/.cargo/bin:$(PATH)
CARGO ?= cargo
BIN := target/release/sharebench
# The binary is built with multi-client (MPI) support.
FEATURES := --features sharebench/mpi

.PHONY: deps build demo test lint bench fuzz clean install lay-out uninstall deb

# Where `make install` puts things (Debian's places for software installed locally).
PREFIX ?= /usr/local
DESTDIR ?=

# Debian packages, then the crates built with fixes sharebench carries (third_party/).
deps:
	@scripts/install-deps.sh
	@scripts/patched-crates.sh

build: deps
	$(CARGO) build --release --locked $(FEATURES)

# The main job: the seed study of NFS vs SMB on a DFS namespace with two synchronous
# replicas, reproduced in the lab at quick scale; it ends by printing the report's path.
DEMO_OUT := sharebench-results/dfs-nfs-vs-smb-$(shell date -u +%Y%m%dT%H%M%SZ)
demo: build
	$(BIN) lab down  # a lab left up (say, by a crash) would stop the study
	$(BIN) study run dfs-nfs-vs-smb --scale quick --out $(DEMO_OUT)

# fmt, clippy, plain cargo, no module cycles, no overlong functions (scripts/lint.sh).
lint: deps
	CARGO=$(CARGO) scripts/lint.sh

# The lint, then every test: unit tests, integration tests against tmpfs and loop-mounted
# images, and the lab's; those that use the lab take turns while the lint's compiling checks
# and the other tests run beside them (scripts/test.sh).
test: deps
	CARGO=$(CARGO) scripts/test.sh

# Side-by-side ratios against fio and the other peers, measured in one run, then every figure
# against its target in one table (scripts/bench.sh runs the Python package scripts/bench/).
bench: build
	scripts/bench.sh

# Every parser of outside input under libFuzzer, FUZZ_SECONDS each (default 600; nightly
# and cargo-fuzz, installed if missing). Outside CI's budget.
fuzz: deps
	scripts/fuzz.sh

clean:
	$(CARGO) clean

# The binary, its manual pages (sharebench(1), sharebench-run(1), ...) and bash, zsh and
# fish completions, generated from the command line itself.
install: build
	$(MAKE) --no-print-directory lay-out

# What `install` puts in place, from the binary as it is (no build): the package uses it too.
lay-out:
	rm -rf target/install-files
	$(BIN) install-files target/install-files
	install -D -m 0755 $(BIN) $(DESTDIR)$(PREFIX)/bin/sharebench
	install -d $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 0644 target/install-files/man1/*.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	install -D -m 0644 target/install-files/completions/sharebench $(DESTDIR)$(PREFIX)/share/bash-completion/completions/sharebench
	install -D -m 0644 target/install-files/completions/_sharebench $(DESTDIR)$(PREFIX)/share/zsh/vendor-completions/_sharebench
	install -D -m 0644 target/install-files/completions/sharebench.fish $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/sharebench.fish
	@echo "installed in $(DESTDIR)$(PREFIX): bin/sharebench, share/man/man1/sharebench*.1, completions (bash, zsh, fish)"

# A Debian package of what `make install` installs, under /usr: Depends on the shared
# libraries the binary links, Recommends the lab's servers (scripts/deb.sh).
deb: build
	scripts/deb.sh

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/sharebench $(DESTDIR)$(PREFIX)/share/man/man1/sharebench.1 $(DESTDIR)$(PREFIX)/share/man/man1/sharebench-*.1
	rm -f $(DESTDIR)$(PREFIX)/share/bash-completion/completions/sharebench $(DESTDIR)$(PREFIX)/share/zsh/vendor-completions/_sharebench $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/sharebench.fish
