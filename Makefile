# ibtool: InfiniBand diagnostics in one binary.
#   make demo   build, start a small simulated fabric, run ibtool on it, stop it
#   make test   install the bench's Debian packages when missing, run every test
#   make bench  codec benchmarks; ibtool vs infiniband-diags timed on a fat tree
#   make test-vm   boot a Debian guest in qemu and check ibtool on a real kernel (Soft-RoCE)
#   make deb    a Debian package of bin/ibtool (installs beside infiniband-diags)

GO        ?= go
BIN       := bin/ibtool
# The exporter is its own binary (net/http, client_golang and
# exporter-toolkit stay out of the one-shot tools); "ibtool exporter"
# runs it from beside ibtool.
EXPORTER  := bin/ibtool-exporter
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -X main.version=$(VERSION)
# Pure-Go name and user lookups: libc is linked only for libibverbs
# (pkg/verbs), which keeps start-up short for every one-shot tool run.
TAGS      ?= netgo,osusergo
FUZZTIME  ?= 60s
TESTFLAGS ?= -timeout 25m

.PHONY: all build deps test test-vm unit fuzz vet man demo links clean bench deb

all: build

build:
	$(GO) build -tags '$(TAGS)' -ldflags '$(LDFLAGS)' -o $(BIN) .
	$(GO) build -tags '$(TAGS)' -ldflags '$(LDFLAGS)' -o $(EXPORTER) ./cmd/ibtool-exporter

deps:
	@scripts/install-deps.sh

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo 'gofmt needed'; exit 1; }
	$(GO) vet ./...

# The whole suite: unit, command, differential and fault tests. The bench is
# required here, so a missing simulator fails instead of skipping.
test: deps build vet
	CGO_ENABLED=0 $(GO) build -o /dev/null .
	$(GO) run ./scripts/optcheck
	IBTOOL_REQUIRE_BENCH=1 IBTOOL_BIN=$(CURDIR)/$(BIN) $(GO) test $(TESTFLAGS) ./...
	$(MAKE) --no-print-directory fuzz FUZZTIME=5s

# The real-kernel checks: a Debian bookworm guest (built once and cached in
# /var/cache/ibtool-vm) boots under qemu with software emulation, makes a
# Soft-RoCE device and compares ibtool with rdma-core and infiniband-diags.
# The guest also installs the package from make deb (scripts/vm/checks/60-deb.sh).
test-vm: build
	cd examples && $(GO) build -o ../bin/rdmawrite ./rdmawrite
	$(GO) test -c -o bin/verbs.test ./pkg/verbs
	@deb=$$(scripts/mkdeb.sh $(BIN) bin) && IBTOOL_VM_DEB=$$deb scripts/vm/run.sh $(BIN)

# bin/ibtool_VERSION_ARCH.deb and an .rpm beside it: the binaries, the tool
# symlinks in /usr/lib/ibtool/bin, man pages, completions and the
# exporter's systemd unit (scripts/mkdeb.sh stages them; scripts/mkpkg
# packs them with nfpm from packaging/nfpm.yaml).
deb: build
	@scripts/mkdeb.sh $(BIN) bin

# Unit tests only: no simulator needed.
unit:
	$(GO) test -short ./...

# Every fuzz target for FUZZTIME each.
fuzz:
	@scripts/fuzz.sh $(FUZZTIME)

man:
	$(GO) run ./internal/mangen -out man

links: build
	$(BIN) links bin

demo: deps build
	@scripts/demo.sh $(BIN)

# Codec benchmarks, then ibtool and infiniband-diags timed on a simulated
# fat tree (BENCH_HOSTS, BENCH_RADIX, BENCH_RUNS).
bench: deps build
	@scripts/bench.sh $(BIN)

clean:
	rm -rf bin man
