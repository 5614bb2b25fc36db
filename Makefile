# switchyard — `make help` lists the targets.
SHELL := /bin/bash
export PATH := $(PATH):/usr/local/go/bin
GO ?= go
BIN := bin
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION)
# Tiers this machine must run (docs/quickstart.md); CI sets it, see .ci/run.
LAB_REQUIRE ?=
export LAB_REQUIRE

# Go modules of their own inside the repository (Kubernetes libraries stay
# out of the driver's go.mod); make test and make lint cover them too.
NESTED_MODULES := deploy/charts/validate deploy/labsidecars e2e lab/containers

.PHONY: help build deps test unit cover sanity sanity-report lint demo demo-vm bench fuzz clean

help: ## list the targets
	@grep -hE '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-8s %s\n", $$1, $$2}'

build: ## build bin/switchyard and bin/switchyard-lab
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN)/ ./cmd/...

demo: build ## the main job: switchyard in proxy mode, a volume's whole life on two local-hostpath connections (root)
	$(BIN)/switchyard-lab demo

demo-vm: build deps ## the demo inside the storage VM (QEMU): the same tours, then a real NFS mount and NVMe/TCP connect (~2 min)
	@mkdir -p $(BIN)/static
	CGO_ENABLED=0 $(GO) build -ldflags "$(LDFLAGS)" -o $(BIN)/static/ ./cmd/...
	$(BIN)/switchyard-lab demo --vm --static-dir $(BIN)/static

deps: ## what the test tiers need on this machine: zfs-fuse (fidelity tier), helm (chart tier), Docker (container tier), QEMU + a Debian kernel (vm tier), etcd/containerd + Kubernetes and the CSI sidecars built from the module proxy (cluster tier); installs as root
	@scripts/ensure-zfs-fuse.sh
	@GO=$(GO) scripts/ensure-helm.sh >/dev/null
	@if [ "$$(id -u)" = 0 ]; then scripts/ensure-docker.sh; fi || case ",$$LAB_REQUIRE," in *,container,*|*,all,*) exit 1;; *) echo "deps: the container tier will skip (no Docker)";; esac
	@scripts/ensure-vm.sh || case ",$$LAB_REQUIRE," in *,vm,*|*,all,*) exit 1;; *) echo "deps: the vm tier will skip (LAB_REQUIRE does not ask for it)";; esac
	@if [ "$$(id -u)" = 0 ]; then scripts/ensure-cluster-deps.sh && GO=$(GO) scripts/ensure-kube.sh >/dev/null; else false; fi || case ",$$LAB_REQUIRE," in *,cluster,*|*,all,*) exit 1;; *) echo "deps: the cluster tier will skip (needs root; the first build of Kubernetes takes 15-35 min, then it is cached)";; esac

test: deps lint build ## every test tier this machine can run: unit (with the bounded soak and fuzz seeds), sanity with real mounts, fidelity against zfs-fuse, the storage VM (root)
	@mkdir -p $(BIN)
	SANITY_REPORT=$(CURDIR)/$(BIN)/sanity-report.txt SANITY_VM_REPORT=$(CURDIR)/$(BIN)/sanity-vm-report.txt $(GO) test -count=1 -timeout 60m ./...
	@for m in $(filter-out e2e,$(NESTED_MODULES)); do echo "go test ($$m)"; (cd $$m && $(GO) test -count=1 ./...) || exit 1; done
	cd e2e && $(GO) test -count=1 ./framework/... ./backends/... ./badinput/... # the suites themselves run in make e2e
	@if [ "$$(id -u)" = 0 ]; then $(MAKE) --no-print-directory chart-cluster-test; else echo "chart-cluster-test: skipped, not root (the local cluster needs root)"; fi
	@$(MAKE) --no-print-directory sanity-report

unit: ## unit tests only (no root needed)
	$(GO) test -count=1 $$($(GO) list ./... | grep -v /sanity)

# cover measures in-package coverage only (go test -cover, no -coverpkg): a
# package's number is what its own tests (internal and external test
# packages beside it) run. Backend behaviour tests live beside their backend
# for this reason, so the number a reader of a backend sees is honest; a
# package exercised only from elsewhere (lab/zfshost, by driver/zfsgeneric's
# tests) shows as untested rather than borrowing credit.
# PKGS narrows the run (default: the packages of `make unit`); COVER_MIN
# (default 60, 0 = report only) fails the target when a backend package
# (driver/allbackends' imports and their subpackages) is below it.
cover: ## unit-tier tests with coverage: a table per package, lowest first, backends marked (PKGS=, COVER_MIN=60)
	@scripts/cover.sh $(PKGS)

sanity: ## csi-sanity against every backend, direct and through the proxy; prints counts per configuration
	@mkdir -p $(BIN)  # the report goes to bin/, which a fresh clone has not got
	SANITY_REPORT=$(CURDIR)/$(BIN)/sanity-report.txt $(GO) test -count=1 ./sanity/
	@$(MAKE) --no-print-directory sanity-report

sanity-report:
	@if [ -f $(BIN)/sanity-report.txt ]; then cat $(BIN)/sanity-report.txt; fi
	@if [ -f $(BIN)/sanity-vm-report.txt ]; then echo; echo "in the storage VM (node specs with real kernel targets):"; cat $(BIN)/sanity-vm-report.txt; fi

# connection sets and copies across connections (helper "sets")
.PHONY: sanity-sets
sanity-sets: ## csi-sanity on the connection-set targets only (root; no simulated hosts)
	SANITY_SETS=1 $(GO) test -count=1 ./sanity -run 'TestSanitySets$$'

lint: ## gofmt, go vet and golangci-lint (the pinned v2, installed into bin/tools on first use)
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	@GO=$(GO) scripts/ensure-golangci-lint.sh >/dev/null
	$(BIN)/tools/golangci-lint run ./...
	@$$(GO=$(GO) scripts/ensure-actionlint.sh) # .github/workflows (pinned, installed into bin/tools on first use)
	@for m in $(NESTED_MODULES); do echo "vet + golangci-lint ($$m)"; (cd $$m && $(GO) vet ./... && $(CURDIR)/$(BIN)/tools/golangci-lint run ./...) || exit 1; done

bench: build ## benchmarks: proxy overhead, backends' create/delete, Infinia lifecycle, start-up and memory; stage+publish in the VM
	$(GO) test -run '^$$' -bench . -benchmem -count 1 ./bench/...
	SANITY_VM_BENCH=1 SANITY_VM_RUN='^$$' $(GO) test -count=1 -run TestSanityInVM -v ./sanity/ | grep -E 'ns/op|VM:|vm tier'
	$(BIN)/switchyard-lab bench --connections 100

FUZZTIME ?= 10s
fuzz: ## every fuzz target for FUZZTIME each (default 10s), a summary table; stops at the first crash and names its reproducer
	GO=$(GO) FUZZTIME=$(FUZZTIME) scripts/fuzz.sh

clean: ## remove build output
	rm -rf $(BIN)

# --- images and chart (deploy/) ----------------------------------------------------
.PHONY: image chart-test
image: ## container images as docker-archive tarballs, no registry (Docker from Debian; root); prints their directory
	@GO=$(GO) VERSION=$(VERSION) scripts/images.sh

chart-test: ## helm lint, golden renders, schema checks and strict API decoding of deploy/charts/switchyard (helm via scripts/ensure-helm.sh)
	@GO=$(GO) scripts/ensure-helm.sh >/dev/null
	$(GO) test -count=1 ./deploy/charts/...
	cd deploy/charts/validate && $(GO) test -count=1 ./...
	cd deploy/labsidecars && $(GO) test -count=1 ./...

.PHONY: chart-cluster-test
chart-cluster-test: build ## the chart installed for real on the local cluster: a duplicate driver name refused, install to Ready timed (root; the cluster is machine-wide: run under the lab lock)
	@GO=$(GO) deploy/charts/switchyard/cluster-test.sh

.PHONY: container-test
container-test: ## the container tier: the simulators as testcontainers-go containers from a local FROM-scratch image (lab/containers; starts Docker, root)
	@scripts/ensure-docker.sh
	cd lab/containers && TESTCONTAINERS_RYUK_DISABLED=true $(GO) test -count=1 -v ./... 2>&1 | grep -E '^(=== RUN|--- |PASS|FAIL|ok|\s+containers_test)'; exit $${PIPESTATUS[0]}

# --- TrueNAS simulator census (issue 15) ---
# The tags each simulated release's digest is derived from; MIDDLEWARE is a
# clone of github.com/truenas/middleware with its tags (cloned into
# .cache/truenas-middleware when absent; needs the network).
MIDDLEWARE ?= .cache/truenas-middleware
TRUENAS_CENSUS := 24.10:TS-24.10.2:- 25.04:TS-25.04.2:v25_04_2 25.10:TS-25.10.1:v25_10_1 26.04:TS-26.0.0-BETA.3:v26_0_0
.PHONY: truenas-census
truenas-census: ## refresh simulators/truenas/census/*.json from the middleware's source at each release tag (MIDDLEWARE=<clone>)
	@test -d $(MIDDLEWARE)/.git || test -f $(MIDDLEWARE)/HEAD || git clone --quiet https://github.com/truenas/middleware $(MIDDLEWARE)
	@for spec in $(TRUENAS_CENSUS); do IFS=: read -r rel tag api <<< "$$spec"; \
		echo "census $$rel <- $$tag ($$api)"; \
		python3 simulators/truenas/census/gen_census.py $(MIDDLEWARE) $$tag $$api > simulators/truenas/census/$$rel.json || exit 1; \
	done
	$(GO) test ./simulators/truenas/ -run 'TestCensus' -count=1

# The local Kubernetes cluster (lab/cluster): control plane and a real node on this machine (root).
# The first run builds Kubernetes and the CSI sidecars from the Go module proxy (tens of minutes; cached).
CLUSTER_FLAGS ?=
CLUSTER_STATE ?= /var/lib/switchyard-lab/cluster
.PHONY: cluster-up cluster-down
cluster-up: build ## start the local Kubernetes cluster and leave it running (CLUSTER_FLAGS=--vm for the storage VM's node, --fresh; CLUSTER_STATE=dir)
	@scripts/ensure-cluster-deps.sh
	@GO=$(GO) scripts/ensure-kube.sh >/dev/null
	$(BIN)/switchyard-lab cluster up --state-dir $(CLUSTER_STATE) $(CLUSTER_FLAGS)
cluster-down: build ## stop the local Kubernetes cluster and clean the host (its state dir stays for a warm start)
	$(BIN)/switchyard-lab cluster down --state-dir $(CLUSTER_STATE)

# --- the cluster tier: e2e suites and Kubernetes' storage conformance (e2e/, docs/testing.md) ---
.PHONY: e2e e2e-conformance
E2E_PROVIDER ?= local
e2e: build ## Ginkgo e2e in a cluster: every backend's data path, topology modes, handle limits, live reload (E2E_PROVIDER=local|kind, E2E_VM=0|1, E2E_LABELS=...; root)
	E2E_PROVIDER=$(E2E_PROVIDER) GO=$(GO) e2e/run.sh
e2e-conformance: build ## Kubernetes' external storage suite (e2e.test v1.37.2) per backend family (CONFORMANCE=focused|ci|vm|full, FAMILIES=..., FOCUS=...; root)
	E2E_PROVIDER=$(E2E_PROVIDER) GO=$(GO) e2e/conformance/run.sh

# --- issue 14's client backends: nfs/smb/lustre-client, node-manual, zfs-local-*, freenas-nvmeof over SSH ---
.PHONY: test-clients test-clients-vm
CLIENTS_FOCUS = nfs-client|smb-client|lustre-client|zfs-local|freenas-nvmeof|truenas-nvmeof
test-clients: ## the client backends' unit tests, fidelity (zfs-fuse, root) and csi-sanity targets only
	@scripts/ensure-zfs-fuse.sh
	$(GO) test -count=1 ./driver/shareclient/ ./driver/nodemanual/ ./driver/zfslocal/ ./driver/truenas/ -run '.'
	$(GO) test -count=1 ./sanity/ -run '^TestSanity$$' -ginkgo.focus '$(CLIENTS_FOCUS)'
test-clients-vm: ## nfs-client and smb-client against the storage VM's nfsd and Samba (QEMU, ~3 min; root)
	SANITY_VM_RUN='^TestShareClientsOnKernel$$' $(GO) test -count=1 -timeout 50m ./sanity/ -run '^TestSanityInVM$$' -v
