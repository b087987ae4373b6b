/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Inside the dns function's zone loader: what reading a master file with
 * libzscanner (dns_zone_file.c) hands to the builder (dns_zone.c), the
 * records as they were read. The reader calls the builder, never the
 * other way round; the growable buffers both use are dns_buf.h's.
 */
#ifndef RR_DNS_ZONE_FILE_H
#define RR_DNS_ZONE_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "dns_buf.h"
#include "dns_zone.h"

struct rec {
	uint32_t owner; /* offsets into loader.data */
	uint32_t rdata;
	uint32_t rdlen;
	uint32_t ttl;
	uint32_t line;
	uint32_t seq;
	uint16_t type;
	uint8_t owner_len;
};

struct loader {
	const char *file;
	struct dns_buf data;
	struct rec *recs;
	size_t nrecs, cap;
	uint8_t origin[DNS_MAX_NAME];
	int have_soa;
	int find_origin; /* only look for the first SOA's owner */
	int found;
	int failed;
	char *err;
	size_t errlen;
};

/*
 * Reads @ld->file with @origin_text as the origin into @ld's records
 * (or, with @ld->find_origin, only looks for the first SOA's owner).
 * Returns 0, or -errno with the sentence in @ld->err.
 */
int dns_zone_scan(struct loader *ld, const char *origin_text);

/* Builds the zone from @ld's records (dns_zone.c). Returns 0, or -errno
 * with the sentence in @ld->err. */
int dns_zone_build(struct loader *ld, struct dns_zone **out);

#endif /* RR_DNS_ZONE_FILE_H */
