# libreceipt: build, install, test. `make help` lists the targets.
PREFIX ?= /usr/local
DESTDIR ?=
VERSION := $(shell sed -n 's/^\#define RECEIPT_VERSION_STRING "\(.*\)"/\1/p' Include/receipt.h)
SWIFT_BUILD := swift build -c release
RELEASE := .build/release
OUT := build
PYTHON ?= python3

.PHONY: all build lib cli install uninstall test test-swift test-c test-python check-embeddable examples clean help

all: build

help:
	@echo "make            build libreceipt.so.1, the receipt CLI, header and receipt.pc into build/"
	@echo "make test       run every test: Swift, the embeddability checks, cmocka (C ABI), pytest (Python)"
	@echo "make install    install into \$$(DESTDIR)\$$(PREFIX) (default /usr/local)"
	@echo "make examples   build and run the C example against build/"

build: lib cli

lib:
	$(SWIFT_BUILD) --product receipt
	mkdir -p $(OUT)/lib/pkgconfig $(OUT)/include
	cp $(RELEASE)/libreceipt.so $(OUT)/lib/libreceipt.so.1
	strip --strip-unneeded $(OUT)/lib/libreceipt.so.1
	ln -sf libreceipt.so.1 $(OUT)/lib/libreceipt.so
	cp Include/receipt.h $(OUT)/include/receipt.h
	sed -e 's|@PREFIX@|$(abspath $(OUT))|' -e 's|@VERSION@|$(VERSION)|' Include/receipt.pc.in > $(OUT)/lib/pkgconfig/receipt.pc

cli:
	$(SWIFT_BUILD) --product receipt-cli
	mkdir -p $(OUT)/bin
	cp $(RELEASE)/receipt-cli $(OUT)/bin/receipt

install: build
	install -d $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/bin
	install -m 755 $(OUT)/lib/libreceipt.so.1 $(DESTDIR)$(PREFIX)/lib/libreceipt.so.1
	ln -sf libreceipt.so.1 $(DESTDIR)$(PREFIX)/lib/libreceipt.so
	install -m 644 Include/receipt.h $(DESTDIR)$(PREFIX)/include/receipt.h
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' Include/receipt.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/receipt.pc
	install -m 755 $(OUT)/bin/receipt $(DESTDIR)$(PREFIX)/bin/receipt

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/lib/libreceipt.so.1 $(DESTDIR)$(PREFIX)/lib/libreceipt.so \
	      $(DESTDIR)$(PREFIX)/include/receipt.h $(DESTDIR)$(PREFIX)/lib/pkgconfig/receipt.pc \
	      $(DESTDIR)$(PREFIX)/bin/receipt

test: test-swift check-embeddable test-c test-python
	@echo "make test: all suites passed"

test-swift:
	swift test

check-embeddable: lib
	Tests/abi/check_embeddable.sh $(OUT)/lib/libreceipt.so.1

test-c: lib
	$(MAKE) -C Tests/c run LIBDIR=$(abspath $(OUT))/lib INCDIR=$(abspath $(OUT))/include

test-python: lib cli
	RECEIPT_LIBRARY=$(abspath $(OUT))/lib/libreceipt.so.1 RECEIPT_CLI=$(abspath $(OUT))/bin/receipt \
	  PYTHONPATH=$(abspath bindings/python) $(PYTHON) -m pytest -q Tests/python

examples: build
	$(MAKE) -C examples/c run PKG_CONFIG_PATH=$(abspath $(OUT))/lib/pkgconfig

clean:
	rm -rf $(OUT) .build
	$(MAKE) -C Tests/c clean
