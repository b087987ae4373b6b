// SPDX-License-Identifier: GPL-2.0
/*
 * Linked into every bundled function module (build/functions/NAME.so): the
 * entry point reqrouter looks up after dlopen(), defined by the public
 * header, as an out-of-tree module defines it too.
 */
#define RR_MODULE_ENTRY
#include <reqrouter/rr_module.h>
