/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The function API: what a file in functions/ sees.
 *
 * A function answers one UDP request. It is handed the request payload in
 * the frame the request arrived in and writes its reply over it, in place:
 * buf holds len bytes of request and has room for at most room bytes of
 * reply. It returns the reply length (0..room) or a negative errno, in
 * which case nothing is sent and the drop is counted.
 *
 * Functions are called concurrently from several worker threads and must
 * not keep unsynchronised state. They must not block: a worker serves a
 * whole batch of requests between two system calls.
 *
 * A file registers its function with one line:
 *
 *	RR_FUNCTION(reverse, 1232, "reverse the payload", reverse_handler);
 *
 * or, for a pure function (see RR_FN_PURE):
 *
 *	RR_FUNCTION_FLAGS(reverse, 1232, "reverse the payload",
 *			  reverse_handler, RR_FN_PURE);
 *
 * The build links every .c file of functions/ into reqrouter and the tools, so
 * dropping a file here is all it takes. A function may also ship an XDP
 * implementation in functions/NAME.bpf.c (see rr_xdp.h).
 */
#ifndef RR_FUNCTION_H
#define RR_FUNCTION_H

#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>

/* Read-only context of one request; ports in host byte order. */
struct rr_request {
	int family; /* AF_INET or AF_INET6 */
	union {
		struct in_addr v4;
		struct in6_addr v6;
	} src, dst;
	uint16_t src_port;
	uint16_t dst_port;
	uint32_t queue;	 /* RX queue the request arrived on */
	uint32_t thread; /* worker index within that queue */
};

typedef int (*rr_handler_t)(const struct rr_request *req, uint8_t *buf,
			    size_t len, size_t room);

struct rr_function {
	const char *name;
	const char *description;
	rr_handler_t handler;
	uint16_t port;	/* default port; the config may move it */
	uint32_t flags; /* RR_FN_* */
};

/*
 * The function is pure: the same request payload always gets the same
 * reply, whoever sends it, whenever, and whatever room it is offered (a
 * function that shortens its reply to fit room is not pure). Its replies
 * may then be answered from a cache inside the XDP program (config:
 * cache, cache_ttl); the cache sends a stored reply only where it fits the
 * new request's room.
 */
#define RR_FN_PURE (1U << 0)

/*
 * Registration collects pointers in the "rr_functions" section; the linker
 * provides __start_/__stop_ symbols around it. Pointers rather than the
 * structs themselves keep the section a dense array whatever padding or
 * sanitizer redzones the compiler adds to the structs.
 */
#define RR_FUNCTION_FLAGS(_name, _port, _desc, _handler, _flags)       \
	static const struct rr_function rr_function_##_name = {        \
		.name = #_name,                                        \
		.description = _desc,                                  \
		.handler = _handler,                                   \
		.port = _port,                                         \
		.flags = _flags,                                       \
	};                                                             \
	static const struct rr_function *const rr_function_ptr_##_name \
		__attribute__((used, section("rr_functions"))) =       \
			&rr_function_##_name

#define RR_FUNCTION(_name, _port, _desc, _handler) \
	RR_FUNCTION_FLAGS(_name, _port, _desc, _handler, 0)

#endif /* RR_FUNCTION_H */
