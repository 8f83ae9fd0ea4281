# GpuLayer. `make demo` and `make test` work on a fresh machine with Go
# installed: modules are fetched by the go command, generated code is
# committed, and no GPU or Docker is needed.
GO ?= go
STATICCHECK_VERSION ?= v0.7.0
export CGO_ENABLED ?= 1
# go-nvml's cgo bindings declare every NVML function, deprecated ones too;
# without this each first build prints ~170 lines of deprecation warnings.
export CGO_CFLAGS ?= -O2 -g -Wno-deprecated-declarations

BIN := bin/gpulayer
PLUGIN_DIR := bin/plugins
EXAMPLE_PLUGINS := $(notdir $(wildcard examples/plugins/*))

.PHONY: build plugins demo test test-security test-short test-ui lint fmt proto bench bench-quick bench-logstore test-cluster fuzz test-faults test-agent-faults replay-campaign test-api test-python python-version test-container
# The commit `gpulayer version` reports (empty outside a git checkout).
COMMIT := $(shell git rev-parse --short=12 HEAD 2>/dev/null)
# The version `gpulayer version` reports, and the Python SDK's (make
# python-version): dev, or vX.Y.Z for a release (make build VERSION=v1.2.3;
# the environment does not set it).
VERSION = dev
GO_LDFLAGS = -X main.version=$(VERSION)$(if $(COMMIT), -X main.commit=$(COMMIT))

build: plugins
	@echo "==> building $(BIN) (coordinator, agent, CLI)"
	$(GO) build -ldflags "$(GO_LDFLAGS)" -o $(BIN) ./cmd/gpulayer

# Out-of-tree example plugins, built into the directory the demo agent
# loads with --plugin-dir.
plugins:
	@mkdir -p $(PLUGIN_DIR)
	@echo "==> building the example plugins into $(PLUGIN_DIR)/, then $(BIN): the first build compiles every dependency once (a few minutes on two cores), later ones take seconds"
	@for p in $(EXAMPLE_PLUGINS); do \
		echo "$(GO) build -o $(PLUGIN_DIR)/gpulayer-executor-$$p ./examples/plugins/$$p"; \
		$(GO) build -o $(PLUGIN_DIR)/gpulayer-executor-$$p ./examples/plugins/$$p || exit 1; \
	done

demo: build
	@echo "==> running scripts/demo.sh"
	./scripts/demo.sh

test:
	GPULAYER_FAULT_SCHEDULES=5 $(GO) test -race -count=1 ./...
	$(MAKE) test-faults N=10 FAULT_BUDGET=5m
	$(MAKE) fuzz FUZZTIME=5000x

# The container executor against the local Docker daemon: run, uid,
# capabilities, read-only root, memory limit, GPU injection from CDI
# edits, image_artifact, stop, KillAll and orphan reaping, and a
# container job and a gang of containers through a real coordinator and
# agents (docs/containers.md). Each test skips, saying why, where no daemon
# answers; -v shows those lines.
test-container:
	$(GO) test -race -count=1 -v -run 'Docker' ./plugins/container
	$(GO) test -race -count=1 -v -run 'TestContainer' ./integration

# The attack tests alone, each named with its verdict (see
# scripts/test-security.sh and docs/security.md, "Threats, routes and
# controls"). make test runs them too; CI runs them again on their own.
test-security:
	GO=$(GO) ./scripts/test-security.sh

# The API description (docs/api.md) alone: route coverage, every route's
# real answers validated against GET /v1/openapi.json with kin-openapi,
# and the check shown to bite. make test runs them too; CI runs them
# again here so the log lists the routes exercised.
test-api:
	$(GO) test -race -count=1 -v -run 'TestAPIDescription|TestOpenAPIRoute|TestRealAnswersMatchAPIDescription|TestAPIValidator' ./coordinator/httpapi/

# The web dashboard in headless Chromium against a real coordinator:
# scripts/ensure-chromium.sh finds the browser (or installs Debian's
# chromium with apt-get when run as root), then the tests of
# coordinator/ui sign in, check every panel and save PNG screenshots to
# UI_SHOTS_DIR. Built with -race like make test, so that after it
# nothing is compiled again. See docs/dashboard.md.
UI_SHOTS_DIR ?= $(or $(TMPDIR),/tmp)/gpulayer-ui-shots
test-ui:
	@browser=$$(./scripts/ensure-chromium.sh | tail -n 1) && echo "==> dashboard tests in $$browser" && \
	GPULAYER_UI_TEST=1 GPULAYER_CHROMIUM="$$browser" UI_SHOTS_DIR="$(UI_SHOTS_DIR)" \
		$(GO) test -race -count=1 -timeout 5m ./coordinator/ui/...
	@echo "==> screenshots in $(UI_SHOTS_DIR):" && ls $(UI_SHOTS_DIR)

# Every family on the coordinator's and the agent's /metrics passes
# `promtool check metrics` with nothing reported: scripts/check-metrics.sh
# runs a real gpulayer dev, runs a job on it, and checks both pages.
# scripts/ensure-promtool.sh finds promtool, or installs Debian's
# prometheus package with apt-get when run as root (as test-ui does
# chromium). The binary is built as cmd/gpulayer's tests build theirs, so
# after make test nothing is compiled again. See docs/metrics.md.
.PHONY: test-metrics
test-metrics:
	@mkdir -p $(dir $(BIN))
	$(GO) build -o $(BIN) ./cmd/gpulayer
	@promtool=$$(./scripts/ensure-promtool.sh | tail -n 1) && echo "==> /metrics checked with $$promtool" && \
		./scripts/check-metrics.sh $(BIN) "$$promtool"

# The Python SDK (sdk/python) against a real `gpulayer dev`: a fresh
# virtual environment in $(PY_BUILD)/venv that sees the system's pip,
# setuptools and wheel (Debian: python3-venv, python3-setuptools,
# python3-wheel; pip is installed into it only where the system has
# none), the package installed from the checkout with no index, then
# its unittest suite; and PROTOCOL.md's install command in a venv that
# sees nothing of the system's. The binary is built as cmd/gpulayer's tests build
# theirs, so after make test only its link is left. See docs/python.md.
PYTHON ?= $(firstword $(wildcard /usr/bin/python3) python3)
PY_BUILD ?= bin/python
test-python:
	./scripts/ensure-python.sh $(PYTHON)
	$(PYTHON) sdk/python/tools/write_version.py --check $(VERSION)
	@rm -rf $(PY_BUILD)/venv sdk/python/build sdk/python/src/gpulayer.egg-info
	$(PYTHON) -m venv --system-site-packages --without-pip $(PY_BUILD)/venv && \
	{ $(PY_BUILD)/venv/bin/python -m pip --version >/dev/null 2>&1 || $(PY_BUILD)/venv/bin/python -m ensurepip --default-pip; } || { \
		echo "test-python: $(PYTHON) needs venv, setuptools and wheel (Debian: apt-get install python3-venv python3-setuptools python3-wheel)" >&2; exit 1; }
	$(PY_BUILD)/venv/bin/python -m pip install --quiet --no-index --no-build-isolation ./sdk/python
	@rm -rf sdk/python/build sdk/python/src/gpulayer.egg-info
	@# PROTOCOL.md's own command, in a fresh environment that sees nothing
	@# of the system's (no wheel package): the in-tree backend builds it.
	@rm -rf $(PY_BUILD)/fresh && $(PYTHON) -m venv $(PY_BUILD)/fresh && \
	$(PY_BUILD)/fresh/bin/pip install --quiet --no-index --no-build-isolation ./sdk/python && \
	$(PY_BUILD)/fresh/bin/python -c 'import gpulayer; gpulayer.Client' && rm -rf $(PY_BUILD)/fresh
	@rm -rf sdk/python/build sdk/python/src/gpulayer.egg-info
	$(GO) build -ldflags "$(GO_LDFLAGS)" -o $(PY_BUILD)/gpulayer ./cmd/gpulayer
	cd sdk/python && GPULAYER_BIN=$(abspath $(PY_BUILD))/gpulayer $(abspath $(PY_BUILD))/venv/bin/python -m unittest discover -s tests -t . -v

# Writes sdk/python/src/gpulayer/_version.py from VERSION (commit it).
python-version:
	$(PYTHON) sdk/python/tools/write_version.py $(VERSION)

# Randomized fault campaign checked for linearizability (porcupine): N
# schedules on three coordinators over loopback, each replayable from its
# seed (printed on failure). make test runs 40 (5 more inside the -race
# run of every package); make test-faults N=1000 is a long run; SEED=<s> starts from a given
# seed, KEEP_GOING=1 goes on past a failing schedule. See
# docs/reliability.md.
N ?= 50
FAULT_BUDGET ?= 24h
test-faults:
	GPULAYER_FAULT_SCHEDULES=$(N) GPULAYER_FAULT_BUDGET=$(FAULT_BUDGET) $(if $(SEED),GPULAYER_FAULT_SEED=$(SEED)) GPULAYER_FAULT_KEEP_GOING=$(KEEP_GOING) \
		$(GO) test -count=1 -timeout 0 -run TestFaultCampaign -v ./integration/faults

# Real agent and plugin processes under faults (agent SIGKILL and
# restart, plugin crash, agent pause, leader restart): AGENT_N schedules
# (3 also run inside make test's -race run); SEED=<s> starts from a seed. See docs/reliability.md.
AGENT_N ?= 3
test-agent-faults:
	GPULAYER_AGENT_FAULT_SCHEDULES=$(AGENT_N) $(if $(SEED),GPULAYER_AGENT_FAULT_SEED=$(SEED)) \
		$(GO) test -count=1 -timeout 0 -run TestRealAgentFaults -v ./integration/agentfaults

# Snapshot-versus-replay equivalence over random logs: REPLAY_N
# histories of 700 commands from seed SEED (12 from 0 run in make test).
# A replica restored from a snapshot taken anywhere in a log and one that
# replayed the whole log must hold the same records, field by field, and
# answer every later command alike. See docs/architecture.md.
REPLAY_N ?= 2000
replay-campaign:
	GPULAYER_REPLAY_HISTORIES=$(REPLAY_N) $(if $(SEED),GPULAYER_REPLAY_SEED=$(SEED)) \
		$(GO) test -count=1 -timeout 0 -run TestSnapshotAndReplayAgree -v ./coordinator/state

# Native Go fuzzing of every decoder an outsider can reach: Raft commands,
# snapshot restore, HTTP bodies and job specs, tokens, forwarding headers,
# digests. Seed corpora live in each package's testdata/fuzz and also run
# as plain tests. A short run is part of make test; go longer with
# make fuzz FUZZTIME=2000000x. The budgets are counts of inputs, not
# durations: with a duration, Go 1.26's fuzz coordinator can report
# "context deadline exceeded" as the time runs out although no input
# failed (golang/go#75804, fixed in Go 1.27), which failed clean-clone
# runs twice.
FUZZTIME ?= 50000x
FUZZFLAGS = -run '^$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 500x
fuzz:
	$(GO) test $(FUZZFLAGS) -fuzz '^FuzzDecode$$' ./coordinator/command
	$(GO) test $(FUZZFLAGS) -fuzz '^FuzzRestore$$' ./coordinator/state
	$(GO) test $(FUZZFLAGS) -fuzz '^FuzzRecordReader$$' ./coordinator/state
	$(GO) test $(FUZZFLAGS) -fuzz '^FuzzParseLine$$' ./coordinator/outputstore
	$(GO) test $(FUZZFLAGS) -fuzz '^FuzzDecodeStrict$$' ./coordinator/httpapi
	$(GO) test $(FUZZFLAGS) -fuzz '^FuzzValidateJobSpec$$' ./coordinator/httpapi
	$(GO) test $(FUZZFLAGS) -fuzz '^FuzzSourceOf$$' ./coordinator/httpapi
	$(GO) test $(FUZZFLAGS) -fuzz '^FuzzDigest$$' ./coordinator/httpapi
	$(GO) test $(FUZZFLAGS) -fuzz '^FuzzParse$$' ./coordinator/auth

# Three coordinators and two agents in containers built FROM scratch (pulls
# nothing), driven through a leader kill, a follower partition and a full
# restart; see deploy/cluster/README.md. Needs Docker and docker compose.
test-cluster:
	./scripts/test-cluster.sh

# Benchmarks against a three-coordinator cluster on loopback; figures are
# ratios to raw Raft and plain net/http measured in the same run. See
# docs/performance.md.
bench:
	$(GO) run ./bench -out bench/results.json

# Every scenario briefly (part of make test, so the benchmark never rots).
bench-quick:
	$(GO) run ./bench -quick -out bench/results-quick.json

# raft-boltdb against raft-wal as the Raft log store (its own module).
bench-logstore:
	cd bench/walcmp && $(GO) run . -rounds 3 -out results.json

test-short:
	$(GO) test -count=1 ./...

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...

fmt:
	gofmt -w $$(git ls-files '*.go')

# Regenerates the executor protocol's Go code (committed; needs protoc,
# protoc-gen-go and protoc-gen-go-grpc).
proto:
	$(GO) generate ./sdk/executor/...
