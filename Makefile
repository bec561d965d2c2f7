# Installs pipeline: `make install` (PREFIX=/usr/local by default; DESTDIR for staging), and
# `make uninstall` removes exactly the files it installed. `make deb` builds a Debian package of
# the same files under /usr, its dependencies the runtime libraries.
#
# The binary is built in release mode with the Swift runtime linked in (--static-swift-stdlib),
# so it runs without a Swift toolchain; libvips, libcurl and the other C libraries come from the
# system (Scripts/install-dependencies --runtime installs them). The builds have scratch paths
# of their own, so the .build folder of `swift build` and `swift test` is left as it is.

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

BUILD_FLAGS := --configuration release
BINARY := $(SCRATCH)/release/pipeline
# swift-argument-parser's GenerateManual plugin builds the package and writes a page from the
# command's --experimental-dump-help. The page does not depend on how the binary was built, so it
# is made from the debug build in SwiftPM's usual folder, which `swift build` and `swift test`
# have usually made already (`swift package` takes no --static-swift-stdlib, so $(SCRATCH) is no
# place for it: a build with other flags there would compile everything again).
MANUAL_SCRATCH ?= .build
MANPAGE := $(MANUAL_SCRATCH)/plugins/GenerateManual/outputs/pipeline/pipeline.1
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

.PHONY: all install uninstall deb

all: $(BINARY) $(MANPAGE) $(COMPLETIONS)

$(BINARY): $(SOURCES)
	$(SWIFT) build $(BUILD_FLAGS) --static-swift-stdlib --scratch-path $(SCRATCH) --product pipeline
	touch $@

$(MANPAGE): $(SOURCES)
	$(SWIFT) package --scratch-path $(MANUAL_SCRATCH) plugin generate-manual --configuration debug --authors "the pipeline developers"
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

# The binary is installed stripped: its symbols and debug information are most of its size.
install: all
	$(INSTALL) -d $(BINDIR) $(MANDIR) $(BASHDIR) $(ZSHDIR) $(FISHDIR)
	$(INSTALL) -m 755 -s $(BINARY) $(BINDIR)/pipeline
	$(INSTALL) -m 644 $(MANPAGE) $(MANDIR)/pipeline.1
	$(INSTALL) -m 644 $(GENERATED)/pipeline.bash $(BASHDIR)/pipeline
	$(INSTALL) -m 644 $(GENERATED)/_pipeline $(ZSHDIR)/_pipeline
	$(INSTALL) -m 644 $(GENERATED)/pipeline.fish $(FISHDIR)/pipeline.fish

uninstall:
	rm -f $(BINDIR)/pipeline $(MANDIR)/pipeline.1 $(BASHDIR)/pipeline $(ZSHDIR)/_pipeline $(FISHDIR)/pipeline.fish

deb: $(DEB)

# The files `make install` puts under /usr, staged, with a control file whose Depends are the
# libraries Scripts/install-dependencies --runtime installs.
$(DEB): all Scripts/install-dependencies
	rm -rf $(DEBROOT)
	$(MAKE) install PREFIX=/usr DESTDIR=$(CURDIR)/$(DEBROOT)
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
