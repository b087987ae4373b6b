/* SPDX-License-Identifier: GPL-2.0 */
/* The registry: every function linked in through RR_FUNCTION(). */
#ifndef RR_REGISTRY_H
#define RR_REGISTRY_H

#include <stddef.h>
#include <stdint.h>

#include <reqrouter/rr_function.h>

/*
 * An in-kernel implementation: the BPF object built from
 * functions/NAME.bpf.c, embedded through its skeleton. The Makefile
 * generates one RR_XDP_IMPL(NAME) line per such file.
 */
struct rr_xdp_impl {
	const char *name; /* the function it implements */
	const void *(*elf_bytes)(size_t *size);
};

#define RR_XDP_IMPL(_name)                                             \
	static const struct rr_xdp_impl rr_xdp_impl_##_name = {        \
		.name = #_name,                                        \
		.elf_bytes = _name##__elf_bytes,                       \
	};                                                             \
	static const struct rr_xdp_impl *const rr_xdp_impl_ptr_##_name \
		__attribute__((used, section("rr_xdp_impls"))) =       \
			&rr_xdp_impl_##_name

#define RR_MAX_FUNCTIONS 128

struct rr_module;

size_t rr_registry_count(void);
const struct rr_function *rr_registry_at(size_t i);
const struct rr_function *rr_registry_find(const char *name);
const struct rr_function *rr_registry_by_port(uint16_t port);

/* The in-kernel implementation of function @name, or NULL (also when a
 * module replaced the function). */
const struct rr_xdp_impl *rr_registry_xdp(const char *name);

/*
 * Checks what the linker collected: names set, unique and printable, a
 * handler and a port in 1..65535. Two may share a default port: the
 * config moves or disables one (rr_config_finish() refuses two enabled
 * functions on one port). Returns 0, or -EINVAL with the first problem
 * written to err.
 */
int rr_registry_check(char *err, size_t errlen);
/* The checks of one function, as for a module's. */
int rr_registry_check_one(const struct rr_function *f, char *err,
			  size_t errlen);

/*
 * Loads the function module at @path (module.h): each of its functions
 * replaces the registered one of the same name or is added. Returns 0
 * (the module in *out if not NULL) or -errno with one line in @err, and
 * then nothing changed.
 */
int rr_registry_load_module(const char *path, struct rr_module **out, char *err,
			    size_t errlen);
/* rr_registry_load_module() in two steps, for a caller that prepares
 * the functions in between: open and check (nothing registered yet), then
 * adopt into the registry, or rr_module_close() to give up. */
int rr_registry_open_module(const char *path, struct rr_module **out, char *err,
			    size_t errlen);
void rr_registry_adopt(struct rr_module *m);
/* What the registry serves, saved and put back (free()d either way), for
 * a caller that adopts a module before it knows it can keep it. */
struct rr_registry_snapshot;
struct rr_registry_snapshot *rr_registry_save(void);
void rr_registry_restore(struct rr_registry_snapshot *s);
/* Unloads @m once no instance uses it and the registry serves another
 * version of all its functions. */
void rr_registry_release(struct rr_module *m);
/* The version of @fn for its metrics: its module's (struct rr_module's
 * version), or reqrouter's for a compiled-in function. */
const char *rr_registry_version(const struct rr_function *fn);
/* The module @fn came from, or NULL for a compiled-in function. */
struct rr_module *rr_registry_module_of(const struct rr_function *fn);

#endif /* RR_REGISTRY_H */
