# Installs pipeline: `make install` (PREFIX=/usr/local by default; DESTDIR for staging), and
# `make uninstall` removes exactly the files it installed. `make deb` builds a Debian package of
# the same files under /usr, its dependencies the runtime libraries.
#
# The binary is built in release mode with the Swift runtime linked in (--static-swift-stdlib),
# so it runs without a Swift toolchain; libvips, libcurl and the other C libraries come from the
# system (Scripts/install-dependencies --runtime installs them). `make test` runs the tests as
# CI does. The builds have scratch paths of their own, so the .build folder of `swift build` and
# `swift test` is left as it is.

PREFIX ?= /usr/local
DESTDIR ?=
SWIFT ?= swift
SCRATCH ?= .build-release-static
INSTALL ?= install

BINDIR := $(DESTDIR)$(PREFIX)/bin
MANDIR := $(DESTDIR)$(PREFIX)/share/man/man1
BASHDIR := $(DESTDIR)$(PREFIX)/share/bash-completion/completions
ZSHDIR := $(DESTDIR)$(PREFIX)/share/zsh/site-functions
FISHDIR := $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d

# No debug information: the binary is installed stripped, and the DWARF a release build writes
# by default is a large share of its compile and link time.
BUILD_FLAGS := --configuration release -Xswiftc -gnone
BINARY := $(SCRATCH)/release/pipeline
# How the tests are built: under ThreadSanitizer, unoptimized and testable as `swift test`
# builds, but each module whole in one compiler job (SwiftPM does that in its release
# configuration only: a debug build's jobs each take a batch of a module's files and parse all
# the others again), with line tables only, all a sanitizer's report shows.
SANITIZED := -c release -Xswiftc -Onone -Xswiftc -enable-testing -Xswiftc -gline-tables-only
TEST_SCRATCH := .build-tsan
TEST_OPTIONS := --sanitize=thread $(SANITIZED)
TEST_BUILD := $(TEST_OPTIONS) --scratch-path $(TEST_SCRATCH)
# The tests that hold the process's lanes to a short limit, which `make test` runs in a process
# of their own.
ALONE_TESTS := ItemTimeoutTests/(aSlowInputFailsNamingItselfTheStageAndTheLimitAndLeavesNothing|theOtherInputsGoOnWhileOneIsPastTheLimit)
# The suites that feed the code untrusted input (images, pipeline files, HTTP and S3 answers,
# fuzz tests, the TIFF and PNG row readers, the WebP decode and the SSIMULACRA 2 metric's C
# included), again under AddressSanitizer. Built without the Server trait: none of these suites
# is the server's, and Hummingbird's and SwiftNIO's build would be most of this one. With the
# versions Package.resolved pins: resolving without the trait would rewrite the file without
# the packages only the server needs, under the builds beside this one.
HOSTILE_BUILD := --disable-default-traits --force-resolved-versions --sanitize=address $(SANITIZED) --scratch-path .build-asan
HOSTILE_SUITES := Hostile|Fuzz|Decode|Decoder|StripTIFF|WebP|PNGRows|JSONParser|PipelineFile|UnusualImage|Animation|Placeholder|VipsCall|VipsStep|Remote|S3|Composite|Manifest|SSIMULACRA2
# swift-argument-parser's GenerateManual plugin builds the package and writes a page from the
# command's --experimental-dump-help. The page does not depend on how the binary was built, so it
# is made from the tests' build, which `make test` has usually made already (`swift package`
# takes no --static-swift-stdlib, so $(SCRATCH) is no place for it: a build with other flags
# there would compile everything again).
MANPAGE := $(TEST_SCRATCH)/plugins/GenerateManual/outputs/pipeline/pipeline.1
GENERATED := $(SCRATCH)/generated

# Everything the binary is built from: `make install` rebuilds when one is newer than the
# binary, and otherwise installs what is built, so that `make && sudo make install` needs no
# Swift toolchain on root's PATH.
SOURCES := Package.swift $(shell find Sources Plugins -type f 2>/dev/null)
COMPLETIONS := $(GENERATED)/pipeline.bash $(GENERATED)/_pipeline $(GENERATED)/pipeline.fish

# The package: named for the version the binary prints and dpkg's architecture.
VERSION := $(shell sed -n 's/.*static let version = "\(.*\)"/\1/p' Sources/PipelineKit/PipelineKitInfo.swift)
ARCH := $(shell dpkg --print-architecture 2>/dev/null || echo amd64)
DEB := pipeline_$(VERSION)_$(ARCH).deb
DEBROOT := $(SCRATCH)/deb

.PHONY: all install uninstall deb test test-build test-hostile test-hostile-build suite-costs print-%

all: $(BINARY) $(MANPAGE) $(COMPLETIONS)

$(BINARY): $(SOURCES)
	$(SWIFT) build $(BUILD_FLAGS) --static-swift-stdlib --scratch-path $(SCRATCH) --product pipeline
	touch $@

$(MANPAGE): $(SOURCES)
	TSAN_OPTIONS=atexit_sleep_ms=0 $(SWIFT) package $(TEST_BUILD) plugin generate-manual --configuration release \
	  --authors "the pipeline developers"
	test -s $@
	touch $@

$(GENERATED)/pipeline.bash: $(BINARY)
	mkdir -p $(GENERATED)
	$(BINARY) --generate-completion-script bash > $@
$(GENERATED)/_pipeline: $(BINARY)
	mkdir -p $(GENERATED)
	$(BINARY) --generate-completion-script zsh > $@
$(GENERATED)/pipeline.fish: $(BINARY)
	mkdir -p $(GENERATED)
	$(BINARY) --generate-completion-script fish > $@

# The tests, as CI runs them: the whole suite in $(TEST_BUILD)'s build, in four processes at
# once (.ci/test-in-shards.sh says why). A sanitizer's shadow memory does not fit under a memory
# limit, so the memory-limit tests run the release binary instead, when `make` has built it
# from these sources, and otherwise say they are skipped. The fuzz tests run 250 cases here:
# they parse on one thread, where ThreadSanitizer has nothing to find, and run in full under
# AddressSanitizer (`make test-hostile`). ThreadSanitizer's pause of a second at each process's
# exit (for races in exit handlers) is off: the suite starts `pipeline` processes by the hundred.
# The tests that need the process's lanes to themselves (CommandRunner.lanesAreFree) run in a
# fifth process beside the four: they mostly wait out time limits.
TEST_ENVIRONMENT := PIPELINE_UNSANITIZED_BINARY=$$($(MAKE) -s -q $(BINARY) && echo $(abspath $(BINARY))) \
  PIPELINE_FUZZ_ITERATIONS=250 TSAN_OPTIONS=atexit_sleep_ms=0
test: test-build
	$(TEST_ENVIRONMENT) .ci/test-in-shards.sh 4 --alone "$(ALONE_TESTS)" $(TEST_BUILD)
test-build:
	$(SWIFT) build --build-tests $(TEST_BUILD)
# Each suite's cost, by which .ci/test-in-shards.sh deals the suites to its processes, measured
# anew (.ci/suite-costs): worth running when suites were added or grew.
suite-costs: test-build
	$(TEST_ENVIRONMENT) .ci/test-in-shards.sh --measure $(TEST_BUILD)
# The suites that read untrusted input, under AddressSanitizer. LeakSanitizer is off: libvips,
# GLib and XCTest keep allocations for the life of the process, which it reports.
test-hostile: test-hostile-build
	ASAN_OPTIONS=detect_leaks=0 .ci/test-in-shards.sh 4 --only "$(HOSTILE_SUITES)" $(HOSTILE_BUILD)
test-hostile-build:
	$(SWIFT) build --build-tests $(HOSTILE_BUILD)
# A variable's value, for scripts that share a build (`make -s print-TEST_BUILD`).
print-%:
	@echo '$($*)'

# The binary is installed stripped: its symbols and debug information are most of its size.
install: all
	$(INSTALL) -d $(BINDIR) $(MANDIR) $(BASHDIR) $(ZSHDIR) $(FISHDIR)
	$(INSTALL) -m 755 -s $(BINARY) $(BINDIR)/pipeline
	$(INSTALL) -m 644 $(MANPAGE) $(MANDIR)/pipeline.1
	$(INSTALL) -m 644 $(GENERATED)/pipeline.bash $(BASHDIR)/pipeline
	$(INSTALL) -m 644 $(GENERATED)/_pipeline $(ZSHDIR)/_pipeline
	$(INSTALL) -m 644 $(GENERATED)/pipeline.fish $(FISHDIR)/pipeline.fish

# A PREFIX left with no file at all is pipeline's own, and its empty folders go with it; a
# shared one (/usr/local, whose folders and links were there before) keeps every folder, and no
# folder above PREFIX is ever removed.
uninstall:
	rm -f $(BINDIR)/pipeline $(MANDIR)/pipeline.1 $(BASHDIR)/pipeline $(ZSHDIR)/_pipeline $(FISHDIR)/pipeline.fish
	@prefix='$(DESTDIR)$(PREFIX)'; \
	if [ -d "$$prefix" ] && [ -z "$$(find "$$prefix" ! -type d -print -quit)" ]; then find "$$prefix" -depth -type d -empty -delete; fi

deb: $(DEB)

# The files `make install` puts under /usr, staged, with a control file whose Depends are the
# libraries Scripts/install-dependencies --runtime installs. The zsh completion goes where
# Debian's zsh looks for a package's (site-functions is searched only under /usr/local).
$(DEB): all Scripts/install-dependencies
	rm -rf $(DEBROOT)
	$(MAKE) install PREFIX=/usr DESTDIR=$(CURDIR)/$(DEBROOT) ZSHDIR=$(CURDIR)/$(DEBROOT)/usr/share/zsh/vendor-completions
	mkdir -p $(DEBROOT)/DEBIAN
	printf '%s\n' \
	  'Package: pipeline' \
	  'Version: $(VERSION)' \
	  'Architecture: $(ARCH)' \
	  'Maintainer: the pipeline developers <pipeline@users.noreply.github.com>' \
	  "Installed-Size: $$(du -sk $(DEBROOT)/usr | cut -f1)" \
	  "Depends: $$(Scripts/install-dependencies --list-runtime | paste -sd, - | sed 's/,/, /g')" \
	  'Section: graphics' \
	  'Priority: optional' \
	  'Homepage: https://github.com/pipeline/pipeline' \
	  'Description: declarative image pipelines: thumbnails, responsive sets, placeholders' \
	  ' One JSON file says which images to read and what to make of them; pipeline run makes' \
	  ' them with libvips, each input decoded once for all its outputs.' \
	  > $(DEBROOT)/DEBIAN/control
	dpkg-deb --root-owner-group --build $(DEBROOT) $@
