// SPDX-License-Identifier: GPL-2.0
/*
 * The top of the dns function's zone loader: dns_zone_load() reads the
 * master file with Knot's libzscanner into records, lower-casing names as
 * knotd does and refusing what it refuses while reading, then has
 * dns_zone.c, the floor below, build the zone from them
 * (dns_zone_file.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libzscanner/scanner.h>

#include "dns_zone_file.h"

static int fail(struct loader *ld, const char *file, uint64_t line,
		const char *what)
{
	if (!ld->failed)
		snprintf(ld->err, ld->errlen, "%s:%llu: %s", file,
			 (unsigned long long)line, what);
	ld->failed = 1;
	return -EINVAL;
}

/* Lower-cases the names in one RDATA as Knot's canonical form has them. */
static void rdata_lower(uint16_t type, uint8_t *rd, size_t len)
{
	uint8_t *p = rd, *end = rd + len;
	const int8_t *b;
	size_t n;
	int h;

	if (!dns_type_lowercased(type) || !len)
		return;
	for (b = dns_rdata_blocks(type, 1, NULL); *b != DNS_B_END; b++) {
		switch (*b) {
		case DNS_B_CNAME:
		case DNS_B_NAME:
			n = dns_name_len_in(p, end);
			if (!n)
				return;
			dns_name_lower(p, p, n);
			p += n;
			break;
		case DNS_B_NAPTR_HDR:
			h = dns_naptr_header_len(p, end);
			if (h < 0)
				return;
			p += h;
			break;
		case DNS_B_REST:
			return;
		default:
			if (*b > end - p)
				return;
			p += *b;
			break;
		}
	}
}

static void on_error(zs_scanner_t *s)
{
	struct loader *ld = s->process.data;

	fail(ld, s->file.name ? s->file.name : ld->file, s->line_counter,
	     zs_strerror(s->error.code));
	s->state = ZS_STATE_STOP;
}

static void on_record(zs_scanner_t *s)
{
	struct loader *ld = s->process.data;
	const char *file = s->file.name ? s->file.name : ld->file;
	uint8_t owner[DNS_MAX_NAME];
	size_t olen = s->r_owner_length;
	struct rec *r;
	long off;

	if (ld->failed || olen < 1 || olen > DNS_MAX_NAME) {
		s->state = ZS_STATE_STOP;
		return;
	}
	dns_name_lower(owner, s->r_owner, olen);
	if (ld->find_origin) {
		if (s->r_type == DNS_T_SOA) {
			memcpy(ld->origin, owner, olen);
			ld->found = 1;
			s->state = ZS_STATE_STOP;
		}
		return;
	}
	if (s->r_class != DNS_C_IN) {
		char what[64];

		snprintf(what, sizeof(what),
			 "class %u: only IN records are served", s->r_class);
		fail(ld, file, s->line_counter, what);
		s->state = ZS_STATE_STOP;
		return;
	}
	if (dns_name_under(owner, ld->origin) < 0)
		return; /* out of the zone: knotd leaves it out too */
	if (s->r_type == DNS_T_SOA) {
		if (dns_name_under(owner, ld->origin) > 0) {
			fail(ld, file, s->line_counter,
			     "SOA record below the zone's apex");
			s->state = ZS_STATE_STOP;
			return;
		}
		if (ld->have_soa)
			return; /* knotd ignores a second SOA */
		ld->have_soa = 1;
	}
	if (dns_grow((void **)&ld->recs, &ld->cap, ld->nrecs + 1,
		     sizeof(*ld->recs)))
		goto oom;
	r = &ld->recs[ld->nrecs];
	off = dns_buf_add(&ld->data, owner, olen);
	if (off < 0)
		goto oom;
	r->owner = (uint32_t)off;
	r->owner_len = (uint8_t)olen;
	off = dns_buf_add(&ld->data, s->r_data, s->r_data_length);
	if (off < 0)
		goto oom;
	r->rdata = (uint32_t)off;
	r->rdlen = s->r_data_length;
	rdata_lower(s->r_type, ld->data.p + off, r->rdlen);
	r->type = s->r_type;
	r->ttl = s->r_ttl;
	r->line = (uint32_t)s->line_counter;
	r->seq = (uint32_t)ld->nrecs;
	ld->nrecs++;
	return;
oom:
	fail(ld, file, s->line_counter, "out of memory");
	s->state = ZS_STATE_STOP;
}

/* One pass of libzscanner over the file. */
int dns_zone_scan(struct loader *ld, const char *origin_text)
{
	zs_scanner_t *s;
	int ret = 0;

	s = malloc(sizeof(*s));
	if (!s)
		return -ENOMEM;
	if (zs_init(s, origin_text, DNS_C_IN, 3600) != 0) {
		snprintf(ld->err, ld->errlen, "zone origin '%s': %s",
			 origin_text, zs_strerror(s->error.code));
		ret = -EINVAL;
		goto out;
	}
	if (!ld->find_origin) /* the origin as libzscanner reads it */
		dns_name_lower(ld->origin, s->zone_origin,
			       s->zone_origin_length);
	if (zs_set_input_file(s, ld->file) != 0) {
		snprintf(ld->err, ld->errlen, "cannot read zone file %s: %s",
			 ld->file, zs_strerror(s->error.code));
		ret = -EINVAL;
		goto out;
	}
	if (zs_set_processing(s, on_record, on_error, ld) != 0) {
		ret = -EINVAL;
		goto out;
	}
	if (zs_parse_all(s) != 0 && !ld->failed)
		fail(ld, ld->file, s->line_counter, zs_strerror(s->error.code));
	if (ld->failed)
		ret = -EINVAL;
out:
	zs_deinit(s);
	free(s);
	return ret;
}

int dns_zone_load(const char *file, const char *origin, struct dns_zone **out,
		  char *err, size_t errlen)
{
	struct loader ld = { 0 };
	char text[DNS_MAX_NAME * 4 + 2];
	int ret;

	*out = NULL;
	ld.file = file;
	ld.err = err;
	ld.errlen = errlen;
	if (access(file, R_OK)) {
		snprintf(err, errlen, "cannot read zone file %s: %s", file,
			 strerror(errno));
		return -EINVAL;
	}
	if (!origin) {
		/* The first SOA's owner, with relative names read from the
		 * root: so the file must name it in full (or set $ORIGIN). */
		ld.find_origin = 1;
		ret = dns_zone_scan(&ld, ".");
		if (ret)
			return ret;
		if (!ld.found) {
			snprintf(
				err, errlen,
				"zone %s has no SOA record to take its origin from",
				file);
			return -EINVAL;
		}
		if (!ld.origin[0]) {
			snprintf(
				err, errlen,
				"zone %s: its SOA's owner is the root; to serve the root zone, or a file with relative names, say 'zone = ORIGIN %s'",
				file, file);
			return -EINVAL;
		}
		ld.find_origin = 0;
		ld.found = 0;
		dns_name_str(ld.origin, text, sizeof(text));
	} else {
		size_t n = strlen(origin);

		snprintf(text, sizeof(text), "%s%s", origin,
			 n && origin[n - 1] == '.' ? "" : ".");
	}
	ret = dns_zone_scan(&ld, text);
	if (ret)
		goto out;
	if (!ld.have_soa) {
		char name[DNS_MAX_NAME * 4 + 2];

		dns_name_str(ld.origin, name, sizeof(name));
		snprintf(err, errlen, "zone %s has no SOA record for %s", file,
			 name);
		ret = -EINVAL;
		goto out;
	}
	ret = dns_zone_build(&ld, out);
out:
	free(ld.data.p);
	free(ld.recs);
	return ret;
}
