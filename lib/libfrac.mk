# The one place of the user-space build flags, included by every user-space Makefile (lib/,
# bpf/, tools/*/, tests/emulator/, tests/guest/*/) after its first target:
#   FRAC_CFLAGS  the -I flags: lib/ (libfrac.h), include/ (frac_hw.h), the uAPI header's folder
#                and libdrm's (frac_accel.h includes "drm.h")
#   LIBFRAC      lib/libfrac.a, the one way libfrac is linked: list it after the objects; the
#                rule below has lib/'s Makefile bring it up to date first
FRAC_ROOT := $(abspath $(dir $(lastword $(MAKEFILE_LIST)))..)
FRAC_CFLAGS := -I$(FRAC_ROOT)/lib -I$(FRAC_ROOT)/include -I$(FRAC_ROOT)/include/uapi/drm \
	-I/usr/include/drm
LIBFRAC := $(FRAC_ROOT)/lib/libfrac.a

ifneq ($(abspath $(CURDIR)),$(FRAC_ROOT)/lib)
$(LIBFRAC): frac-libfrac-force
	@$(MAKE) --no-print-directory -s -C $(FRAC_ROOT)/lib libfrac.a
.PHONY: frac-libfrac-force
frac-libfrac-force:
endif
