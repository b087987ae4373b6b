/* SPDX-License-Identifier: GPL-2.0 */
/* The release every binary reports with --version; the Makefile passes it
 * from the VERSION file. */
#ifndef RR_VERSION_H
#define RR_VERSION_H

#ifndef RR_VERSION
#define RR_VERSION "unknown"
#endif

#endif /* RR_VERSION_H */
