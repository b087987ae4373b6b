// SPDX-License-Identifier: GPL-2.0
/*
 * The XDP engine's request frames (xdpgen.h): addresses from the
 * interface and the neighbour table (or --dst-mac), a payload whose reply
 * the engine can check at both ends, and with --payloads one frame per
 * request with the reply each must get.
 */
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>

#include "log.h"
#include "packet.h"
#include "xdpgen.h"

static int parse_mac(const char *s, uint8_t mac[ETH_ALEN])
{
	unsigned int b[ETH_ALEN];
	int i;

	if (sscanf(s, "%x:%x:%x:%x:%x:%x", &b[0], &b[1], &b[2], &b[3], &b[4],
		   &b[5]) != ETH_ALEN)
		return -EINVAL;
	for (i = 0; i < ETH_ALEN; i++) {
		if (b[i] > 0xff)
			return -EINVAL;
		mac[i] = (uint8_t)b[i];
	}
	return 0;
}

static int own_mac(const char *ifname, uint8_t mac[ETH_ALEN])
{
	char path[128], buf[64];
	FILE *f;
	int err = -ENOENT;

	snprintf(path, sizeof(path), "/sys/class/net/%s/address", ifname);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	if (fgets(buf, sizeof(buf), f))
		err = parse_mac(buf, mac);
	fclose(f);
	return err;
}

/* The server's MAC from the neighbour table (the test bed makes static
 * entries; elsewhere, ping the server once or pass --dst-mac). */
static int neigh_mac(const struct rl_config *cfg, const char *addr,
		     uint8_t mac[ETH_ALEN])
{
	char cmd[256], line[512], *p;
	FILE *f;
	int err = -ENOENT;

	snprintf(cmd, sizeof(cmd), "ip %s neigh show %s dev %s 2>/dev/null",
		 cfg->family == AF_INET6 ? "-6" : "-4", addr, cfg->ifname);
	f = popen(cmd, "r");
	if (!f)
		return -errno;
	while (err && fgets(line, sizeof(line), f)) {
		p = strstr(line, "lladdr ");
		if (p)
			err = parse_mac(p + 7, mac);
	}
	pclose(f);
	return err;
}

static int own_addr(const struct rl_config *cfg, void *out)
{
	struct ifaddrs *ifa, *i;
	int err = -EADDRNOTAVAIL;
	struct in6_addr *a6;

	if (getifaddrs(&ifa))
		return -errno;
	for (i = ifa; i && err; i = i->ifa_next) {
		if (!i->ifa_addr || strcmp(i->ifa_name, cfg->ifname) ||
		    i->ifa_addr->sa_family != cfg->family)
			continue;
		if (cfg->family == AF_INET) {
			memcpy(out,
			       &((struct sockaddr_in *)i->ifa_addr)->sin_addr,
			       4);
			err = 0;
		} else {
			a6 = &((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr;
			if (IN6_IS_ADDR_LINKLOCAL(a6))
				continue;
			memcpy(out, a6, 16);
			err = 0;
		}
	}
	freeifaddrs(ifa);
	return err;
}

/*
 * The IPv4 header checksum (if any) and the UDP checksum of the frame @f
 * whose lengths are set, computed by src/lib/packet.c as the server does;
 * a UDP checksum of 0 goes on the wire as 0xffff.
 */
static void frame_csums(uint8_t *f, int family)
{
	struct rr_pkt pkt = { .l3_off = ETH_HLEN, .family = family };
	struct udphdr *udp;
	uint16_t csum;

	if (family == AF_INET) {
		struct iphdr *ip4 = (struct iphdr *)(f + ETH_HLEN);

		ip4->check = 0;
		csum = rr_csum_fold(rr_csum_partial(ip4, sizeof(*ip4), 0));
		memcpy(&ip4->check, &csum, 2);
		pkt.l4_off = ETH_HLEN + sizeof(*ip4);
	} else {
		pkt.l4_off = ETH_HLEN + sizeof(struct ipv6hdr);
	}
	udp = (struct udphdr *)(f + pkt.l4_off);
	udp->check = 0;
	csum = rr_udp_csum(f, &pkt);
	udp->check = csum ? csum : 0xffff;
}

/* The Ethernet addresses: the interface's, and the server's from
 * --dst-mac or the neighbour table (@addr, as text). */
static int fill_macs(const struct rl_config *cfg, struct ethhdr *eth,
		     const char *addr)
{
	int err = own_mac(cfg->ifname, eth->h_source);

	if (err) {
		pr_warn("cannot read the MAC of %s\n", cfg->ifname);
		return err;
	}
	err = cfg->dst_mac ? parse_mac(cfg->dst_mac, eth->h_dest)
			   : neigh_mac(cfg, addr, eth->h_dest);
	if (err)
		pr_warn("%s\n",
			cfg->dst_mac
				? "--dst-mac needs aa:bb:cc:dd:ee:ff"
				: "no neighbour entry for the server; give --dst-mac");
	return err;
}

/* The IP header after @eth for a UDP datagram of @ulen bytes from the
 * interface's address to @dst; @req gets both addresses. */
static int fill_ip(const struct rl_config *cfg, struct ethhdr *eth,
		   const void *dst, uint32_t ulen, struct rr_request *req)
{
	struct ipv6hdr *ip6;
	struct iphdr *ip4;
	int err;

	if (cfg->family == AF_INET) {
		eth->h_proto = htons(ETH_P_IP);
		ip4 = (struct iphdr *)(eth + 1);
		err = own_addr(cfg, &ip4->saddr);
		memcpy(&ip4->daddr, dst, 4);
		ip4->version = 4;
		ip4->ihl = 5;
		ip4->ttl = 64;
		ip4->protocol = IPPROTO_UDP;
		ip4->frag_off = htons(0x4000); /* DF */
		ip4->tot_len = htons((uint16_t)(sizeof(*ip4) + ulen));
		memcpy(&req->src.v4, &ip4->saddr, 4);
		memcpy(&req->dst.v4, &ip4->daddr, 4);
	} else {
		eth->h_proto = htons(ETH_P_IPV6);
		ip6 = (struct ipv6hdr *)(eth + 1);
		err = own_addr(cfg, &ip6->saddr);
		memcpy(&ip6->daddr, dst, 16);
		ip6->version = 6;
		ip6->hop_limit = 64;
		ip6->nexthdr = IPPROTO_UDP;
		ip6->payload_len = htons((uint16_t)ulen);
		memcpy(&req->src.v6, &ip6->saddr, 16);
		memcpy(&req->dst.v6, &ip6->daddr, 16);
	}
	if (err)
		pr_warn("%s has no %s address\n", cfg->ifname,
			cfg->family == AF_INET ? "IPv4" : "IPv6");
	return err;
}

/* Random edges around a palindrome: reversing the payload in place
 * leaves the middle, and so the checksum, as it was. */
static void fill_payload(uint8_t *pl, uint32_t plen)
{
	uint64_t rnd = 0x8badf00ddeadbeefull;
	uint32_t i, edge = plen < GEN_EDGE ? plen : GEN_EDGE;

	for (i = 0; i < plen; i++) {
		rnd ^= rnd << 13;
		rnd ^= rnd >> 7;
		rnd ^= rnd << 17;
		pl[i] = (uint8_t)rnd;
	}
	for (i = edge; i < plen / 2; i++)
		pl[plen - 1 - i] = pl[i];
}

int gen_build_frame(const struct rl_config *cfg, struct gen_frames *g,
		    struct rr_request *req, uint8_t *payload_out,
		    uint32_t *plen_out, uint32_t *hlen_out)
{
	uint32_t hlen, plen = cfg->payload ? (uint32_t)strlen(cfg->payload)
					   : cfg->len_min;
	char addr[INET6_ADDRSTRLEN];
	struct ethhdr *eth;
	struct udphdr *udp;
	const void *dst;
	uint8_t *f;
	int err;

	g->port = (uint16_t)(GEN_PORT_BASE + getpid() % GEN_PORT_SPAN);
	g->frame = g->buf + 2;
	f = g->frame;
	eth = (struct ethhdr *)f;
	hlen = sizeof(*eth) + sizeof(*udp) +
	       (cfg->family == AF_INET ? sizeof(struct iphdr)
				       : sizeof(struct ipv6hdr));
	if (hlen + plen > GEN_FRAME_MAX) {
		pr_warn("the xdp engine sends at most %u payload bytes here\n",
			GEN_FRAME_MAX - hlen);
		return -EMSGSIZE;
	}
	memset(f, 0, GEN_FRAME_MAX);
	memset(req, 0, sizeof(*req));
	req->family = cfg->family;
	req->src_port = g->port;
	req->dst_port = cfg->ports[0];
	dst = cfg->family == AF_INET
		      ? (const void *)&((struct sockaddr_in *)&cfg->addr)
				->sin_addr
		      : (const void *)&((struct sockaddr_in6 *)&cfg->addr)
				->sin6_addr;
	inet_ntop(cfg->family, dst, addr, sizeof(addr));

	udp = (struct udphdr *)(f + hlen - sizeof(*udp));
	err = fill_macs(cfg, eth, addr);
	if (!err)
		err = fill_ip(cfg, eth, dst, sizeof(*udp) + plen, req);
	if (err)
		return err;
	udp->source = htons(g->port);
	udp->dest = htons(cfg->ports[0]);
	udp->len = htons((uint16_t)(sizeof(*udp) + plen));
	if (cfg->payload)
		memcpy(f + hlen, cfg->payload, plen);
	else
		fill_payload(f + hlen, plen);
	frame_csums(f, cfg->family);

	memcpy(payload_out, f + hlen, plen);
	*plen_out = plen;
	*hlen_out = hlen;
	g->flen = hlen + plen;
	return 0;
}

int gen_indexed_requests(const struct rl_config *cfg, struct gen_frames *g,
			 const struct rr_function *fn, struct rr_request *req,
			 uint32_t hlen)
{
	uint32_t i, plen, room = GEN_FRAME_MAX - hlen, big = 0;
	uint8_t *f, *pl, *hdr = g->frame;
	struct udphdr *udp;
	int r;

	if (cfg->npayloads > GEN_MAX_REQS) {
		pr_warn("the xdp engine takes at most %d payloads\n",
			GEN_MAX_REQS);
		return -E2BIG;
	}
	g->reqs = calloc(cfg->npayloads, sizeof(*g->reqs));
	g->replies = calloc(cfg->npayloads, sizeof(*g->replies));
	if (!g->reqs || !g->replies) {
		pr_warn("out of memory\n");
		return -ENOMEM;
	}
	for (i = 0; i < cfg->npayloads; i++) {
		plen = cfg->payloads[i].len;
		if (plen < 2 || hlen + plen > GEN_REQ_FRAME_MAX) {
			pr_warn("payload %u: the xdp engine sends 2-%u bytes (the first two carry the request's number)\n",
				i + 1, GEN_REQ_FRAME_MAX - hlen);
			return -EMSGSIZE;
		}
		f = g->reqs[i].frame;
		memcpy(f, hdr, hlen);
		pl = f + hlen;
		memcpy(pl, cfg->payloads[i].data, plen);
		pl[0] = (uint8_t)(i >> 8);
		pl[1] = (uint8_t)i;
		udp = (struct udphdr *)(f + hlen - sizeof(*udp));
		udp->len = htons((uint16_t)(sizeof(*udp) + plen));
		if (cfg->family == AF_INET)
			((struct iphdr *)(f + ETH_HLEN))->tot_len =
				htons((uint16_t)(sizeof(struct iphdr) +
						 sizeof(*udp) + plen));
		else
			((struct ipv6hdr *)(f + ETH_HLEN))->payload_len =
				htons((uint16_t)(sizeof(*udp) + plen));
		frame_csums(f, cfg->family);
		g->reqs[i].len = hlen + plen;

		memcpy(g->replies[i].payload, pl, plen);
		r = fn->handler(req, g->replies[i].payload, plen,
				room < GEN_REPLY_MAX ? room : GEN_REPLY_MAX);
		if (r < 2) {
			pr_warn("%s gives payload %u no reply of at least 2 bytes (%d)\n",
				fn->name, i + 1, r);
			return -EINVAL;
		}
		g->replies[i].len = (uint32_t)r;
		if (g->reqs[i].len > g->reqs[big].len)
			big = i;
	}
	memcpy(g->frame, g->reqs[big].frame, g->reqs[big].len);
	g->flen = g->reqs[big].len;
	return 0;
}
