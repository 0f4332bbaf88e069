# SPDX-License-Identifier: GPL-2.0
#
# krt: build the module (kbuild) and krtctl; run checks and guest tests.
#   make                 modules (krt.ko, krt_bench.ko) + tool
#   make C=1 / W=1       sparse / extra warnings, passed to kbuild
#   make checkstyle      checkpatch.pl --strict over src/ and include/
#   make check           deps, build, checkstyle, sparse, selftests in guests
#   make demo            two guests, krtctl, debugfs
#   make bench           krt vs raw verbs, nvme-rdma, ibv_rc_pingpong (bench/)
#   make install         module, krtctl, headers, man pages, unit (DESTDIR,
#                        PREFIX, KVER honoured); make uninstall
#   make dkms-install    source into /usr/src/krt-VERSION, dkms add/build/install
#   make man             krtctl.8 and krt.4 from Documentation/man (rst2man)

# kbuild cannot build a module in a folder whose path has a space (M= is
# split on it): say so instead of failing somewhere inside the kernel's make
ifneq ($(words $(CURDIR)),1)
$(error krt: kbuild cannot build in a path with spaces ("$(CURDIR)"); clone or link the checkout at a path without them)
endif

KVER ?= $(shell $(CURDIR)/scripts/kver 2>/dev/null)
KDIR ?= /lib/modules/$(KVER)/build
PWD  := $(CURDIR)

CC ?= cc
USER_CFLAGS := -O2 -g -Wall -Wextra -Wshadow -Wformat=2 -Wstrict-prototypes \
	-Wmissing-prototypes -Wno-unused-parameter -std=gnu11 \
	-I$(PWD)/include/uapi $(shell pkg-config --cflags libmnl 2>/dev/null)
USER_LIBS := $(shell pkg-config --libs libmnl 2>/dev/null || echo -lmnl)

KRTCTL_SRCS := $(wildcard src/krtctl/*.c)
KRTCTL_HDRS := $(wildcard src/krtctl/*.h) include/uapi/linux/krt.h include/uapi/linux/krt_stats.h \
	include/uapi/linux/krt_bench.h

VERSION := $(shell sed -n 's/^\#define KRT_VERSION[ \t]*"\(.*\)"/\1/p' src/krt/krt.h)
PREFIX ?= /usr/local
SBINDIR ?= $(PREFIX)/sbin
MANDIR ?= $(PREFIX)/share/man
SYSCONFDIR ?= /etc
SYSTEMDDIR ?= $(SYSCONFDIR)/systemd/system
COMPLETIONDIR ?= $(PREFIX)/share/bash-completion/completions
# what an out-of-tree ULP builds against: -I$(KRT_SRCDIR)/include and
# KBUILD_EXTRA_SYMBOLS=$(KRT_SRCDIR)/$(KVER)/Module.symvers
KRT_SRCDIR ?= $(PREFIX)/src/krt
MODDIR ?= /lib/modules/$(KVER)/updates
DKMS_SRC ?= /usr/src/krt-$(VERSION)
MAN_OUT := .vm/man

.PHONY: all module krtctl selftests-bin clean checkstyle sparse check demo bench bench-stats \
	check-debug install uninstall man dkms-src dkms-install dkms-deb dkms-uninstall print-version install-guard

all: module krtctl selftests-bin

# KRT_FAULT=y builds the fault injection knobs (src/krt/fault.c, debugfs
# fault/) that the selftests drive; the test entry points (scripts/check,
# check-debug, demo, bench, bench-stats) set it.  Off by default: what
# 'make' and 'make install' build for a storage node carries no test switch.
KRT_FAULT ?=

module:
	$(MAKE) -C $(KDIR) M=$(PWD) $(if $(C),C=$(C)) $(if $(W),W=$(W)) KRT_FAULT=$(KRT_FAULT) modules

krtctl: src/krtctl/krtctl

src/krtctl/krtctl: $(KRTCTL_SRCS) $(KRTCTL_HDRS)
	$(CC) $(USER_CFLAGS) -o $@ $(KRTCTL_SRCS) $(USER_LIBS)

selftests-bin:
	$(MAKE) -C selftests CC=$(CC) USER_CFLAGS="$(USER_CFLAGS)" USER_LIBS="$(USER_LIBS)"

clean:
	$(MAKE) -C $(KDIR) M=$(PWD) clean
	rm -f src/krtctl/krtctl
	$(MAKE) -C selftests clean

checkstyle:
	scripts/checkstyle

sparse:
	mkdir -p .vm; $(MAKE) -C $(KDIR) M=$(PWD) C=2 W=1 KRT_FAULT=$(KRT_FAULT) modules 2>&1 | tee .vm/sparse.log; \
	! grep -E 'warning:|error:' .vm/sparse.log

check:
	scripts/check

check-debug:
	scripts/check-debug

demo:
	scripts/demo

# what counting costs on the data path: a ratio within one guest boot
bench-stats:
	scripts/bench-stats

# krt against raw verbs, nvme-rdma and ibv_rc_pingpong in the same guest
# boot: bench/results.json, results.md, plot.png (scripts/bench)
bench:
	scripts/bench

man:
	scripts/check-man $(MAN_OUT)

# make install: modules (krt.ko, krt_bench.ko) to $(MODDIR) (depmod when DESTDIR is empty: a
# package runs it in its postinst), krtctl and krt-boot to $(SBINDIR), the
# uapi header to $(PREFIX)/include/linux, the kernel API and Module.symvers
# to $(KRT_SRCDIR), man pages, bash completion, krt.service, and the
# example configuration (never over an existing /etc/krt/krt.conf)
install: install-guard all man
	install -D -m 0644 src/krt/krt.ko $(DESTDIR)$(MODDIR)/krt.ko
	install -D -m 0644 src/krt-bench/krt_bench.ko $(DESTDIR)$(MODDIR)/krt_bench.ko
	install -D -m 0755 src/krtctl/krtctl $(DESTDIR)$(SBINDIR)/krtctl
	sed 's|@SBINDIR@|$(SBINDIR)|g; s|@SYSCONFDIR@|$(SYSCONFDIR)|g' packaging/krt-boot.in > .vm/krt-boot
	install -D -m 0755 .vm/krt-boot $(DESTDIR)$(SBINDIR)/krt-boot
	install -D -m 0644 include/uapi/linux/krt.h $(DESTDIR)$(PREFIX)/include/linux/krt.h
	install -D -m 0644 include/uapi/linux/krt_stats.h $(DESTDIR)$(PREFIX)/include/linux/krt_stats.h
	install -D -m 0644 include/uapi/linux/krt_bench.h $(DESTDIR)$(PREFIX)/include/linux/krt_bench.h
	install -D -m 0644 include/krt/krt.h $(DESTDIR)$(KRT_SRCDIR)/include/krt/krt.h
	install -D -m 0644 include/uapi/linux/krt.h $(DESTDIR)$(KRT_SRCDIR)/include/uapi/linux/krt.h
	install -D -m 0644 include/uapi/linux/krt_stats.h $(DESTDIR)$(KRT_SRCDIR)/include/uapi/linux/krt_stats.h
	install -D -m 0644 Module.symvers $(DESTDIR)$(KRT_SRCDIR)/$(KVER)/Module.symvers
	install -D -m 0644 $(MAN_OUT)/krtctl.8 $(DESTDIR)$(MANDIR)/man8/krtctl.8
	install -D -m 0644 $(MAN_OUT)/krt.4 $(DESTDIR)$(MANDIR)/man4/krt.4
	install -D -m 0644 packaging/bash-completion/krtctl $(DESTDIR)$(COMPLETIONDIR)/krtctl
	sed 's|@SBINDIR@|$(SBINDIR)|g; s|@SYSCONFDIR@|$(SYSCONFDIR)|g' packaging/krt.service.in > .vm/krt.service
	install -D -m 0644 .vm/krt.service $(DESTDIR)$(SYSTEMDDIR)/krt.service
	install -D -m 0644 packaging/krt.conf.example $(DESTDIR)$(PREFIX)/share/doc/krt/krt.conf.example
	install -D -m 0644 packaging/modprobe-krt.conf $(DESTDIR)$(PREFIX)/share/doc/krt/modprobe-krt.conf
	[ -e $(DESTDIR)$(SYSCONFDIR)/krt/krt.conf ] || \
		install -D -m 0644 packaging/krt.conf.example $(DESTDIR)$(SYSCONFDIR)/krt/krt.conf
	$(if $(DESTDIR),,depmod -a $(KVER))

# make uninstall: the files install put there (never a folder wholesale:
# KRT_SRCDIR may be where someone keeps sources) except /etc/krt/krt.conf
# (the node's configuration stays, as a package's conffile does)
uninstall: install-guard
	rm -f $(DESTDIR)$(MODDIR)/krt.ko $(DESTDIR)$(MODDIR)/krt_bench.ko $(DESTDIR)$(SBINDIR)/krtctl \
		$(DESTDIR)$(SBINDIR)/krt-boot $(DESTDIR)$(PREFIX)/include/linux/krt.h \
		$(DESTDIR)$(PREFIX)/include/linux/krt_stats.h \
		$(DESTDIR)$(PREFIX)/include/linux/krt_bench.h \
		$(DESTDIR)$(KRT_SRCDIR)/include/uapi/linux/krt_stats.h \
		$(DESTDIR)$(MANDIR)/man8/krtctl.8 $(DESTDIR)$(MANDIR)/man4/krt.4 \
		$(DESTDIR)$(COMPLETIONDIR)/krtctl $(DESTDIR)$(SYSTEMDDIR)/krt.service \
		$(DESTDIR)$(KRT_SRCDIR)/include/krt/krt.h \
		$(DESTDIR)$(KRT_SRCDIR)/include/uapi/linux/krt.h \
		$(DESTDIR)$(KRT_SRCDIR)/$(KVER)/Module.symvers \
		$(DESTDIR)$(PREFIX)/share/doc/krt/krt.conf.example \
		$(DESTDIR)$(PREFIX)/share/doc/krt/modprobe-krt.conf
	-for d in include/krt include/uapi/linux include/uapi include $(KVER); do \
		rmdir --ignore-fail-on-non-empty "$(DESTDIR)$(KRT_SRCDIR)/$$d" 2> /dev/null; \
	done; rmdir --ignore-fail-on-non-empty "$(DESTDIR)$(KRT_SRCDIR)" \
		"$(DESTDIR)$(PREFIX)/share/doc/krt" 2> /dev/null
	$(if $(DESTDIR),,depmod -a $(KVER))

# refuse what would install into, or remove from, the wrong place
install-guard:
	@[ -n "$(KVER)" ] || { echo "krt: no KVER (scripts/kver found no kernel); set KVER=" >&2; exit 1; }
	@[ -n "$(VERSION)" ] || { echo "krt: no KRT_VERSION in src/krt/krt.h" >&2; exit 1; }
	@for d in "$(DESTDIR)$(KRT_SRCDIR)" "$(DESTDIR)$(DKMS_SRC)"; do \
		r=$$(realpath -m "$$d"); \
		case "$(CURDIR)/" in "$$r"/*) \
			echo "krt: $$d holds this checkout: install from elsewhere or set KRT_SRCDIR/DKMS_SRC" >&2; \
			exit 1 ;; \
		esac; \
	done

# DKMS: the modules' sources (krt and krt_bench; no tool, no tests) under $(DKMS_SRC), then
# dkms builds and installs it for KVER and for every kernel installed later
dkms-src: install-guard
	rm -rf $(DESTDIR)$(DKMS_SRC)
	install -d $(DESTDIR)$(DKMS_SRC)
	cp -r --parents Kbuild dkms.conf include src/krt/*.[ch] src/krt/Kbuild \
		src/krt-bench/*.[ch] src/krt-bench/Kbuild $(DESTDIR)$(DKMS_SRC)/
	rm -f $(DESTDIR)$(DKMS_SRC)/src/krt/*.mod.c $(DESTDIR)$(DKMS_SRC)/src/krt-bench/*.mod.c

dkms-install: dkms-src
	dkms add krt/$(VERSION)
	dkms build krt/$(VERSION) -k $(KVER)
	dkms install krt/$(VERSION) -k $(KVER)

# a Debian package of the DKMS sources (scripts/dkms-deb); prints its path
dkms-deb: install-guard
	@scripts/dkms-deb

dkms-uninstall: install-guard
	-dkms remove krt/$(VERSION) --all
	rm -rf $(DKMS_SRC)

print-version:
	@echo $(VERSION)
