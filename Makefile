# SPDX-License-Identifier: GPL-2.0
#
# krt: build the module (kbuild) and krtctl; run checks and guest tests.
#   make                 module + tool
#   make C=1 / W=1       sparse / extra warnings, passed to kbuild
#   make checkstyle      checkpatch.pl --strict over src/ and include/
#   make check           deps, build, checkstyle, sparse, selftests in guests
#   make demo            two guests, krtctl, debugfs

KVER ?= $(shell $(CURDIR)/scripts/kver 2>/dev/null)
KDIR ?= /lib/modules/$(KVER)/build
PWD  := $(CURDIR)

CC ?= cc
USER_CFLAGS := -O2 -g -Wall -Wextra -Wshadow -Wformat=2 -Wstrict-prototypes \
	-Wmissing-prototypes -Wno-unused-parameter -std=gnu11 \
	-I$(PWD)/include/uapi $(shell pkg-config --cflags libmnl 2>/dev/null)
USER_LIBS := $(shell pkg-config --libs libmnl 2>/dev/null || echo -lmnl)

KRTCTL_SRCS := $(wildcard src/krtctl/*.c)
KRTCTL_HDRS := $(wildcard src/krtctl/*.h) include/uapi/linux/krt.h

.PHONY: all module krtctl selftests-bin clean checkstyle sparse check demo \
	check-debug

all: module krtctl selftests-bin

module:
	$(MAKE) -C $(KDIR) M=$(PWD) $(if $(C),C=$(C)) $(if $(W),W=$(W)) modules

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
	mkdir -p .vm; $(MAKE) -C $(KDIR) M=$(PWD) C=2 W=1 modules 2>&1 | tee .vm/sparse.log; \
	! grep -E 'warning:|error:' .vm/sparse.log

check:
	scripts/check

check-debug:
	scripts/check-debug

demo:
	scripts/demo
