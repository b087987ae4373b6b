// SPDX-License-Identifier: GPL-2.0
/*
 * sockperf: the server side of sockperf's UDP protocol, so that the
 * standard `sockperf ping-pong`, `under-load` and `throughput` clients
 * can measure reqrouter as they measure `sockperf server`.
 *
 *	[function sockperf]
 *	enabled = yes
 *
 * Every sockperf message starts with a 14-byte header, big-endian and
 * unaligned: a 64-bit sequence number, 16 bits of flags and the 32-bit
 * length of the whole message, header included; the payload after it is
 * the client's (random bytes). The flags:
 *
 *	1  CLIENT   sent by a client (a server's reply has it cleared)
 *	2  PONG     the client wants this message back
 *	4  WARMUP   sent before the measurement; never answered
 *
 * The server answers a client's message that asks for it by sending the
 * same message back with CLIENT cleared: sequence number, the other flags,
 * length and payload unchanged (clients with --data-integrity compare the
 * bytes). ping-pong marks every message PONG; under-load marks one in
 * --reply-every; throughput marks none. Everything else gets RR_NO_REPLY
 * and shows as reason "no_reply" in the metrics, split by the counters
 * below. sockperf sends one message per UDP datagram; should a datagram
 * carry more, only the first is answered.
 *
 * Opt-in: a benchmark's endpoint should not take a port (and a socket per
 * worker) from every reqrouter that runs without a config. Not pure: the
 * sequence number makes every request new, so caching replies would only
 * churn the cache.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <reqrouter/rr_function.h>

#define SP_HDR_LEN 14
#define SP_FLAGS_OFF 8
#define SP_LEN_OFF 10
#define SP_CLIENT 0x1
#define SP_PONG 0x2
#define SP_WARMUP 0x4
/* The largest message sockperf's own server accepts (MAX_PAYLOAD_SIZE). */
#define SP_MAX_MSG 65507

/* Counter indexes (rr_fn_count() ignores -1). */
struct sp_state {
	int silent, warmup, invalid;
};

static int sp_init(const struct rr_fn_config *cfg, void **state)
{
	struct sp_state *s;

	if (cfg->nsettings)
		return rr_fn_error(cfg, &cfg->settings[0],
				   "unknown key '%s' (sockperf takes none)",
				   cfg->settings[0].key);
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->silent = rr_fn_counter(
		cfg, "sockperf_silent",
		"Client messages that asked for no reply (throughput, under-load).");
	s->warmup = rr_fn_counter(cfg, "sockperf_warmup",
				  "Warm-up messages (never answered).");
	s->invalid = rr_fn_counter(
		cfg, "sockperf_invalid",
		"Datagrams that are no client's sockperf message (ignored).");
	if (s->silent < 0 || s->warmup < 0 || s->invalid < 0) {
		free(s);
		return -EINVAL;
	}
	*state = s;
	return 0;
}

static void sp_fini(void *state)
{
	free(state);
}

/* For a bare call (no init: the fuzzer, the tools without a config). */
static const struct sp_state sp_nostate = { -1, -1, -1 };

static int sp_handler(const struct rr_request *req, uint8_t *buf, size_t len,
		      size_t room)
{
	const struct sp_state *s = req->state ? req->state : &sp_nostate;
	uint32_t msglen;
	uint16_t flags;

	if (len < SP_HDR_LEN)
		goto invalid;
	flags = (uint16_t)(buf[SP_FLAGS_OFF] << 8 | buf[SP_FLAGS_OFF + 1]);
	msglen = (uint32_t)buf[SP_LEN_OFF] << 24 |
		 (uint32_t)buf[SP_LEN_OFF + 1] << 16 |
		 (uint32_t)buf[SP_LEN_OFF + 2] << 8 | buf[SP_LEN_OFF + 3];
	/* A message cut short, or a header that lies about its length. */
	if (msglen < SP_HDR_LEN || msglen > len || msglen > SP_MAX_MSG)
		goto invalid;
	/* Another server's reply: answering it would start a loop. */
	if (!(flags & SP_CLIENT))
		goto invalid;
	if (flags & SP_WARMUP) {
		rr_fn_count(req, s->warmup, 1);
		return RR_NO_REPLY;
	}
	if (!(flags & SP_PONG)) {
		rr_fn_count(req, s->silent, 1);
		return RR_NO_REPLY;
	}
	if (msglen > room)
		return -EMSGSIZE;
	buf[SP_FLAGS_OFF + 1] &= (uint8_t)~SP_CLIENT;
	return (int)msglen;

invalid:
	rr_fn_count(req, s->invalid, 1);
	return RR_NO_REPLY;
}

RR_FUNCTION_DEF(sockperf, 11111,
		"sockperf's UDP server: answers the messages a client marks",
		.handler = sp_handler, .init = sp_init, .fini = sp_fini,
		.flags = RR_FN_OPT_IN);
