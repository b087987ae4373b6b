// SPDX-License-Identifier: GPL-2.0
/*
 * Request parsing and reply construction. The XDP program has already
 * parsed the frame, but user space checks it again: the frame is in memory
 * user space owns, and this code must be safe on anything (it is fuzzed).
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <netinet/in.h>

#include "function.h"
#include "packet.h"
#include "shared/unicast.h"

#define IP_MF 0x2000
#define IP_OFFSET 0x1fff
#define VLAN_HLEN 4
#define MAX_VLANS 2

#define RR_DROP_LABEL(name, label) [RR_DROP_##name] = label,
static const char *const drop_labels[RR_DROP_MAX] = { [RR_DROP_NONE] = "none",
						      RR_DROPS(RR_DROP_LABEL) };
#undef RR_DROP_LABEL

const char *rr_drop_label(enum rr_drop drop)
{
	return drop < RR_DROP_MAX ? drop_labels[drop] : "unknown";
}

static uint16_t get_be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static void put_be16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v & 0xff;
}

static void swap_bytes(uint8_t *a, uint8_t *b, uint32_t len)
{
	uint8_t tmp[16];

	memcpy(tmp, a, len);
	memcpy(a, b, len);
	memcpy(b, tmp, len);
}

int rr_parse_headers(const uint8_t *frame, uint32_t len, struct rr_pkt *pkt)
{
	uint32_t off = ETH_HLEN, hlen, tot, l4_len, ulen;
	uint16_t proto;
	int vlans = 0;

	if (len < ETH_HLEN)
		return -RR_DROP_MALFORMED;
	/* Group bit: a reply to or from broadcast or multicast. */
	if (!rr_mac_unicast(frame, frame + ETH_ALEN))
		return -RR_DROP_NOT_UNICAST;
	proto = get_be16(frame + 12);
	while (proto == ETH_P_8021Q || proto == ETH_P_8021AD) {
		if (vlans == MAX_VLANS || off + VLAN_HLEN > len)
			return -RR_DROP_MALFORMED;
		proto = get_be16(frame + off + 2);
		off += VLAN_HLEN;
		vlans++;
	}
	pkt->l3_off = off;
	pkt->vlans = vlans;

	if (proto == ETH_P_IP) {
		const uint8_t *ip = frame + off;

		if (off + sizeof(struct iphdr) > len || ip[0] >> 4 != 4)
			return -RR_DROP_MALFORMED;
		hlen = (ip[0] & 0xf) * 4;
		tot = get_be16(ip + 2);
		if (hlen < sizeof(struct iphdr) || tot < hlen ||
		    off + tot > len || ip[9] != IPPROTO_UDP ||
		    get_be16(ip + 6) & (IP_MF | IP_OFFSET))
			return -RR_DROP_MALFORMED;
		/* The XDP program hands options to the kernel (a reply
		 * built by swapping addresses would get them wrong); one
		 * that got here anyway is not answered. */
		if (hlen != sizeof(struct iphdr))
			return -RR_DROP_MALFORMED;
		if (!rr_ipv4_unicast(ip + 12) || !rr_ipv4_unicast(ip + 16))
			return -RR_DROP_NOT_UNICAST;
		/* The kernel drops a bad header checksum; so do we. */
		if (rr_csum_fold(rr_csum_partial(ip, hlen, 0)))
			return -RR_DROP_MALFORMED;
		pkt->family = AF_INET;
		l4_len = tot - hlen;
		off += hlen;
	} else if (proto == ETH_P_IPV6) {
		const uint8_t *ip6 = frame + off;

		if (off + sizeof(struct ipv6hdr) > len || ip6[0] >> 4 != 6 ||
		    ip6[6] != IPPROTO_UDP)
			return -RR_DROP_MALFORMED;
		if (!rr_ipv6_unicast(ip6 + 8) || !rr_ipv6_unicast(ip6 + 24))
			return -RR_DROP_NOT_UNICAST;
		l4_len = get_be16(ip6 + 4);
		off += sizeof(struct ipv6hdr);
		if (off + l4_len > len)
			return -RR_DROP_MALFORMED;
		pkt->family = AF_INET6;
	} else {
		return -RR_DROP_MALFORMED;
	}

	if (l4_len < sizeof(struct udphdr))
		return -RR_DROP_MALFORMED;
	ulen = get_be16(frame + off + 4);
	if (ulen < sizeof(struct udphdr) || ulen > l4_len)
		return -RR_DROP_MALFORMED;
	/* RFC 8200 8.1: over IPv6 a zero UDP checksum is not allowed. */
	if (pkt->family == AF_INET6 && !frame[off + 6] && !frame[off + 7])
		return -RR_DROP_MALFORMED;
	pkt->l4_off = off;
	pkt->payload_off = off + sizeof(struct udphdr);
	pkt->payload_len = ulen - sizeof(struct udphdr);
	return 0;
}

int rr_parse(const uint8_t *frame, uint32_t len, struct rr_pkt *pkt)
{
	int ret = rr_parse_headers(frame, len, pkt);

	if (!ret && !rr_udp_csum_ok(frame, pkt))
		return -RR_DROP_BAD_CHECKSUM;
	return ret;
}

void rr_request_init(struct rr_request *req, const uint8_t *frame,
		     const struct rr_pkt *pkt, uint32_t queue, uint32_t thread)
{
	const uint8_t *ip = frame + pkt->l3_off;
	const uint8_t *udp = frame + pkt->l4_off;

	memset(req, 0, sizeof(*req));
	req->family = pkt->family;
	if (pkt->family == AF_INET) {
		memcpy(&req->src.v4, ip + 12, 4);
		memcpy(&req->dst.v4, ip + 16, 4);
	} else {
		memcpy(&req->src.v6, ip + 8, 16);
		memcpy(&req->dst.v6, ip + 24, 16);
	}
	req->src_port = get_be16(udp);
	req->dst_port = get_be16(udp + 2);
	req->queue = queue;
	req->thread = thread;
	rr_fn_request_bind(req, NULL, 0, NULL);
}

/*
 * 8 bytes a step, each added as its two 32-bit halves to a 64-bit
 * accumulator: ones' complement addition does not care about word width
 * or order, so folding at the end gives the RFC 1071 sum, as 16-bit
 * words would, and the halves leave room for every carry (2^32 bytes add
 * up to less than 2^62), so there is no carry chain to follow and the
 * compiler can overlap the steps. Bytes are summed in memory order, so the
 * result is stored back unswapped.
 */
uint32_t rr_csum_partial(const void *data, uint32_t len, uint32_t sum)
{
	const uint8_t *p = data;
	uint64_t acc = sum, w;
	uint32_t w32 = 0;
	uint16_t h = 0;

	while (len >= 8) {
		memcpy(&w, p, 8);
		acc += (uint32_t)w + (w >> 32);
		p += 8;
		len -= 8;
	}
	if (len >= 4) {
		memcpy(&w32, p, 4);
		acc += w32;
		p += 4;
		len -= 4;
	}
	if (len >= 2) {
		memcpy(&h, p, 2);
		acc += h;
		p += 2;
		len -= 2;
	}
	if (len) {
		h = 0;
		memcpy(&h, p, 1); /* the pad byte is zero */
		acc += h;
	}
	acc = (acc & 0xffffffff) + (acc >> 32);
	acc = (acc & 0xffffffff) + (acc >> 32);
	return (uint32_t)acc;
}

uint16_t rr_csum_fold(uint32_t sum)
{
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* The pseudo-header's sum: addresses, protocol, the UDP length field. */
static uint32_t udp_pseudo_sum(const uint8_t *frame, const struct rr_pkt *pkt)
{
	const uint8_t *ip = frame + pkt->l3_off;
	const uint8_t *udp = frame + pkt->l4_off;
	uint8_t pseudo[4] = { 0, IPPROTO_UDP, udp[4], udp[5] };
	uint32_t sum;

	if (pkt->family == AF_INET)
		sum = rr_csum_partial(ip + 12, 8, 0);
	else
		sum = rr_csum_partial(ip + 8, 32, 0);
	return rr_csum_partial(pseudo, sizeof(pseudo), sum);
}

uint16_t rr_udp_csum(const uint8_t *frame, const struct rr_pkt *pkt)
{
	const uint8_t *udp = frame + pkt->l4_off;

	return rr_csum_fold(rr_csum_partial(udp, get_be16(udp + 4),
					    udp_pseudo_sum(frame, pkt)));
}

uint16_t rr_udp_pseudo_csum(const uint8_t *frame, const struct rr_pkt *pkt)
{
	return (uint16_t)~rr_csum_fold(udp_pseudo_sum(frame, pkt));
}

/*
 * The kernel's rule: a full checksum that checks out, or (a local sender
 * with checksum offload: CHECKSUM_PARTIAL, which the kernel trusts) the
 * pseudo-header's sum alone, left for the device to finish. Zero over
 * IPv4 is "no checksum". The XDP program applies the same rule.
 */
bool rr_udp_csum_ok(const uint8_t *frame, const struct rr_pkt *pkt)
{
	const uint8_t *udp = frame + pkt->l4_off;
	uint16_t field, partial;
	uint32_t pseudo;

	memcpy(&field, udp + 6, 2);
	if (pkt->family == AF_INET && !field)
		return true;
	/* The pseudo-header once, for both forms. */
	pseudo = udp_pseudo_sum(frame, pkt);
	if (!rr_csum_fold(rr_csum_partial(udp, get_be16(udp + 4), pseudo)))
		return true;
	partial = (uint16_t)~rr_csum_fold(pseudo);
	return field == partial;
}

/* The IPv4 header's checksum, over its @hlen bytes at @ip. */
static void put_ip_csum(uint8_t *ip, uint32_t hlen)
{
	uint16_t csum;

	ip[10] = ip[11] = 0;
	csum = rr_csum_fold(rr_csum_partial(ip, hlen, 0));
	memcpy(ip + 10, &csum, 2);
}

/* The full UDP checksum of parsed @frame, whose field is zero. */
static void put_udp_csum(uint8_t *frame, const struct rr_pkt *pkt)
{
	uint16_t csum = rr_udp_csum(frame, pkt);

	if (!csum)
		csum = 0xffff; /* 0 means "no checksum" on the wire */
	memcpy(frame + pkt->l4_off + 6, &csum, 2);
}

/* Everything but the UDP checksum; the field is left zero. */
static uint32_t build_headers(uint8_t *frame, const struct rr_pkt *pkt,
			      uint32_t reply_len)
{
	uint8_t *ip = frame + pkt->l3_off;
	uint8_t *udp = frame + pkt->l4_off;
	uint32_t ulen = sizeof(struct udphdr) + reply_len;

	swap_bytes(frame, frame + ETH_ALEN, ETH_ALEN);
	if (pkt->family == AF_INET) {
		uint32_t hlen = (ip[0] & 0xf) * 4;

		swap_bytes(ip + 12, ip + 16, 4);
		put_be16(ip + 2, (uint16_t)(hlen + ulen));
		ip[8] = RR_REPLY_TTL;
		put_ip_csum(ip, hlen);
	} else {
		swap_bytes(ip + 8, ip + 24, 16);
		put_be16(ip + 4, (uint16_t)ulen);
		ip[7] = RR_REPLY_TTL;
	}
	swap_bytes(udp, udp + 2, 2);
	put_be16(udp + 4, (uint16_t)ulen);
	udp[6] = udp[7] = 0;
	return pkt->l4_off + ulen;
}

uint32_t rr_build_reply(uint8_t *frame, const struct rr_pkt *pkt,
			uint32_t reply_len)
{
	uint32_t len = build_headers(frame, pkt, reply_len);

	put_udp_csum(frame, pkt);
	return len;
}

uint32_t rr_build_reply_partial(uint8_t *frame, const struct rr_pkt *pkt,
				uint32_t reply_len)
{
	uint32_t len = build_headers(frame, pkt, reply_len);
	uint16_t csum = rr_udp_pseudo_csum(frame, pkt);

	memcpy(frame + pkt->l4_off + 6, &csum, 2);
	return len;
}

uint32_t rr_build_udp(uint8_t *frame, const struct rr_udp_ends *e,
		      uint32_t payload_len)
{
	struct rr_pkt pkt = { .l3_off = ETH_HLEN, .family = e->family };
	uint32_t ulen = sizeof(struct udphdr) + payload_len;
	uint8_t *ip = frame + ETH_HLEN, *udp;

	memcpy(frame, e->dst_hw, ETH_ALEN);
	memcpy(frame + ETH_ALEN, e->src_hw, ETH_ALEN);
	if (e->family == AF_INET) {
		put_be16(frame + 12, ETH_P_IP);
		memset(ip, 0, 20);
		ip[0] = 0x45;
		put_be16(ip + 2, (uint16_t)(20 + ulen));
		put_be16(ip + 6, 0x4000); /* DF */
		ip[8] = RR_REPLY_TTL;
		ip[9] = IPPROTO_UDP;
		memcpy(ip + 12, e->saddr, 4);
		memcpy(ip + 16, e->daddr, 4);
		put_ip_csum(ip, 20);
		pkt.l4_off = ETH_HLEN + 20;
	} else {
		put_be16(frame + 12, ETH_P_IPV6);
		memset(ip, 0, 8);
		ip[0] = 0x60;
		put_be16(ip + 4, (uint16_t)ulen);
		ip[6] = IPPROTO_UDP;
		ip[7] = RR_REPLY_TTL;
		memcpy(ip + 8, e->saddr, 16);
		memcpy(ip + 24, e->daddr, 16);
		pkt.l4_off = ETH_HLEN + 40;
	}
	udp = frame + pkt.l4_off;
	put_be16(udp, e->sport);
	put_be16(udp + 2, e->dport);
	put_be16(udp + 4, (uint16_t)ulen);
	udp[6] = udp[7] = 0;
	put_udp_csum(frame, &pkt);
	return pkt.l4_off + ulen;
}

/* Whether @len bytes at @p start with a gather's header. */
static bool sg_header(const uint8_t *p, uint32_t len)
{
	uint32_t magic;

	if (len < sizeof(struct rr_sg_hdr))
		return false;
	memcpy(&magic, p, sizeof(magic));
	return ntohl(magic) == RR_SG_MAGIC;
}

/*
 * The room a reply has in a parsed request's frame of @room bytes: it
 * must fit the buffer, the MTU and the 16-bit lengths, and its IP packet
 * may be at most @max_amplification times the request's (0: no limit;
 * *amp_room is the room that limit left, UINT32_MAX if it did not cut).
 * 0, or -RR_DROP_REPLY_TOO_BIG when not even the request's size fits.
 */
static int reply_room_of(const struct rr_pkt *pkt, uint32_t room, uint32_t mtu,
			 uint32_t max_amplification, uint32_t *reply_room,
			 uint32_t *amp_room)
{
	uint32_t max_frame, hdr;
	uint64_t cap;

	max_frame = room < pkt->l3_off + mtu ? room : pkt->l3_off + mtu;
	if (max_frame > pkt->l3_off + 0xffff)
		max_frame = pkt->l3_off + 0xffff;
	*reply_room =
		max_frame > pkt->payload_off ? max_frame - pkt->payload_off : 0;
	*amp_room = UINT32_MAX;
	if (pkt->payload_len > *reply_room)
		return -RR_DROP_REPLY_TOO_BIG;
	/* Reply IP packet <= factor x request IP packet, in 64 bits. */
	if (max_amplification) {
		hdr = pkt->payload_off - pkt->l3_off;
		cap = (uint64_t)max_amplification * (hdr + pkt->payload_len) -
		      hdr;
		if (cap < *reply_room)
			*amp_room = *reply_room = (uint32_t)cap;
	}
	return 0;
}

/*
 * The request in @frame parsed into @pkt, the room its reply has
 * (reply_room_of()), and @req as the function sees it, with @ctx's
 * queue, thread, state and counters. 0 or -enum rr_drop.
 */
static int prepare(uint8_t *frame, uint32_t len, uint32_t room, uint32_t mtu,
		   uint32_t max_amplification, const struct rr_request *ctx,
		   struct rr_pkt *pkt, struct rr_request *req,
		   uint32_t *reply_room, uint32_t *amp_room)
{
	int ret;

	ret = rr_parse(frame, len, pkt);
	if (ret)
		return ret;
	ret = reply_room_of(pkt, room, mtu, max_amplification, reply_room,
			    amp_room);
	if (ret)
		return ret;
	rr_request_init(req, frame, pkt, ctx->queue, ctx->thread);
	req->state = ctx->state;
	req->worker_state = ctx->worker_state;
	req->counters = ctx->counters;
	return 0;
}

/*
 * What the function returned (@ret, into a room of @reply_room, which
 * the amplification limit made @amp_room) made into the reply, or the
 * reason there is none; with @csum_start, the UDP checksum is left to
 * the transmitter.
 */
static int reply_of(uint8_t *frame, const struct rr_pkt *pkt, int ret,
		    uint32_t reply_room, uint32_t amp_room,
		    uint32_t *csum_start)
{
	if (ret == RR_NO_REPLY)
		return -RR_DROP_NO_REPLY;
	if (ret == -EMSGSIZE || ret > (int)reply_room)
		return reply_room == amp_room ? -RR_DROP_AMPLIFICATION
					      : -RR_DROP_REPLY_TOO_BIG;
	if (ret < 0)
		return -RR_DROP_FUNCTION_ERROR;
	if (!csum_start)
		return (int)rr_build_reply(frame, pkt, (uint32_t)ret);
	*csum_start = pkt->l4_off;
	return (int)rr_build_reply_partial(frame, pkt, (uint32_t)ret);
}

/*
 * The whole path. With @keep, a short request's payload is copied there
 * before the function overwrites it (the reply cache); with @csum_start,
 * the reply's UDP checksum is left for the transmitter.
 */
int rr_serve_keep(uint8_t *frame, uint32_t len, uint32_t room, uint32_t mtu,
		  uint32_t max_amplification, const struct rr_function *fn,
		  const struct rr_request *ctx, struct rr_keep *keep,
		  uint32_t *csum_start)
{
	uint32_t reply_room, amp_room, sg = 0;
	uint32_t reply_flags = 0;
	struct rr_request req;
	struct rr_pkt pkt;
	int ret;

	ret = prepare(frame, len, room, mtu, max_amplification, ctx, &pkt, &req,
		      &reply_room, &amp_room);
	if (ret)
		return ret;
	if (keep) {
		keep->len = UINT32_MAX;
		keep->reply_off = pkt.payload_off;
		if (pkt.payload_len <= keep->max &&
		    pkt.payload_len <= sizeof(keep->req)) {
			memcpy(keep->req, frame + pkt.payload_off,
			       pkt.payload_len);
			keep->len = pkt.payload_len;
		}
	}
	req.reply_flags = &reply_flags;
	req.gather = ctx->gather;
	/* A message of another's gather: the function answers what
	 * follows the header, which stays where it is, in front. */
	if (ctx->gather && ctx->gather->target &&
	    sg_header(frame + pkt.payload_off, pkt.payload_len)) {
		sg = sizeof(struct rr_sg_hdr);
		if (keep)
			keep->len = UINT32_MAX;
	}
	if (ctx->gather) {
		ctx->gather->refused = 0;
		ctx->gather->started = false;
	}
	ret = fn->handler(&req, frame + pkt.payload_off + sg,
			  pkt.payload_len - sg, reply_room - sg);
	if (ret < 0 && ret != RR_NO_REPLY && ctx->gather &&
	    ctx->gather->refused && !ctx->gather->started)
		return -(int)ctx->gather->refused;
	if (ret >= 0)
		ret += (int)sg;
	if (keep && reply_flags & RR_REPLY_NO_CACHE)
		keep->len = UINT32_MAX;
	if (keep)
		keep->cookie = reply_flags & RR_REPLY_CACHE_COOKIE;
	/* A gather it started holds the frame, and answers it: a reply
	 * written here as well would send the frame twice. */
	if (ctx->gather && ctx->gather->started) {
		if (keep)
			keep->len = UINT32_MAX;
		return RR_SERVE_KEPT;
	}
	return reply_of(frame, &pkt, ret, reply_room, amp_room, csum_start);
}

int rr_serve_gathered(uint8_t *frame, uint32_t len, uint32_t room, uint32_t mtu,
		      uint32_t max_amplification, const struct rr_function *fn,
		      const struct rr_request *ctx,
		      const struct rr_gather_result *res)
{
	uint32_t reply_room, amp_room;
	struct rr_request req;
	struct rr_pkt pkt;
	int ret;

	ret = prepare(frame, len, room, mtu, max_amplification, ctx, &pkt, &req,
		      &reply_room, &amp_room);
	if (ret)
		return ret;
	if (fn->api >= 4 && fn->gathered)
		ret = fn->gathered(&req, res, frame + pkt.payload_off,
				   reply_room);
	else /* its list of the missed cut to the amplification limit */
		ret = rr_gather_format(res, frame + pkt.payload_off,
				       amp_room < reply_room ? amp_room
							     : reply_room);
	return reply_of(frame, &pkt, ret, reply_room, amp_room, NULL);
}

/* The context of a caller that runs stateless functions: no state, and
 * counters (if any) in a per-thread scratch array. */
static void plain_ctx(struct rr_request *ctx, uint32_t queue, uint32_t thread)
{
	memset(ctx, 0, sizeof(*ctx));
	ctx->queue = queue;
	ctx->thread = thread;
	rr_fn_request_bind(ctx, NULL, 0, NULL);
}

int rr_serve(uint8_t *frame, uint32_t len, uint32_t room, uint32_t mtu,
	     uint32_t max_amplification, const struct rr_function *fn,
	     uint32_t queue, uint32_t thread)
{
	struct rr_request ctx;

	plain_ctx(&ctx, queue, thread);
	return rr_serve_keep(frame, len, room, mtu, max_amplification, fn, &ctx,
			     NULL, NULL);
}

int rr_serve_partial(uint8_t *frame, uint32_t len, uint32_t room, uint32_t mtu,
		     uint32_t max_amplification, const struct rr_function *fn,
		     uint32_t queue, uint32_t thread, uint32_t *csum_start)
{
	struct rr_request ctx;

	plain_ctx(&ctx, queue, thread);
	return rr_serve_keep(frame, len, room, mtu, max_amplification, fn, &ctx,
			     NULL, csum_start);
}

int rr_serve_unlimited(uint8_t *frame, uint32_t len, uint32_t room,
		       uint32_t mtu, const struct rr_function *fn,
		       uint32_t queue, uint32_t thread)
{
	return rr_serve(frame, len, room, mtu, 0, fn, queue, thread);
}
