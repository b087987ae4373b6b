/* SPDX-License-Identifier: GPL-2.0 */
/*
 * AF_XDP TX metadata (Linux 6.8; the registration flag since 6.11), for
 * building against older uapi headers: Debian 12's linux-libc-dev is 6.1.
 * Values and layout are those of include/uapi/linux/if_xdp.h; each is
 * guarded, so a header that has them wins.
 */
#ifndef RR_XSK_TXMD_H
#define RR_XSK_TXMD_H

#include <linux/if_xdp.h>
#include <linux/types.h>

/* xdp_umem_reg.flags: tx_metadata_len is meant (6.11+ refuse it without). */
#ifndef XDP_UMEM_TX_METADATA_LEN
#define XDP_UMEM_TX_METADATA_LEN (1 << 2)
#endif

/* xdp_desc.options: tx_metadata_len bytes before addr hold a request. */
#ifndef XDP_TX_METADATA
#define XDP_TX_METADATA (1 << 1)
#endif

#ifndef XDP_TXMD_FLAGS_CHECKSUM
#define XDP_TXMD_FLAGS_CHECKSUM (1 << 1)

struct xsk_tx_metadata {
	__u64 flags;
	union {
		struct {
			/* From desc->addr to where checksumming starts. */
			__u16 csum_start;
			/* From csum_start to where the checksum goes. */
			__u16 csum_offset;
			__u64 launch_time; /* XDP_TXMD_FLAGS_LAUNCH_TIME */
		} request;
		struct {
			__u64 tx_timestamp; /* XDP_TXMD_FLAGS_TIMESTAMP */
		} completion;
	};
};
#endif

/*
 * struct xdp_umem_reg as of 6.8. The old header already defines that name
 * without tx_metadata_len, so this one has its own; the kernel tells the
 * versions apart by the length passed to setsockopt().
 */
struct rr_xdp_umem_reg {
	__u64 addr;
	__u64 len;
	__u32 chunk_size;
	__u32 headroom;
	__u32 flags;
	__u32 tx_metadata_len;
};

#endif /* RR_XSK_TXMD_H */
