/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The control socket: a unix stream socket that the main thread polls.
 * A client (reqrouterctl) connects, sends one command line, reads one
 * JSON object and the connection closes; after capture's and trace's,
 * the session's stream follows until it ends or the client goes away. The commands are the rows of
 * rr_ctlcmds[] (ctlcmd.h). Only root, or the group given with
 * --control-group, may connect (the socket's mode); the directory is made
 * if missing.
 */
#ifndef RR_CONTROL_H
#define RR_CONTROL_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/un.h>

#include "ctlcmd.h"
#include "invoker.h"

/*
 * Clients served at once. A client of root or of the user reqrouter runs
 * as always gets a slot (taking, if it must, the one another user's client
 * has held longest); another user's clients hold at most
 * RR_CONTROL_PER_UID slots, and once every slot is taken they are refused
 * at once with a line that says so, never left queued ahead of root's.
 */
#define RR_CONTROL_CLIENTS 16
#define RR_CONTROL_PER_UID 4
/* The listen backlog, and the connections taken per call at most. */
#define RR_CONTROL_BACKLOG 64

/* One connection: its line coming in, then its reply going out. */
struct rr_ctl_client {
	int fd;		      /* -1: a free slot */
	uint64_t deadline_ns; /* CLOCK_MONOTONIC: dropped after it */
	bool changer;	      /* may change the instance (SO_PEERCRED) */
	uint32_t uid;	      /* the peer's (SO_PEERCRED; -1 if unknown) */
	bool too_long;	      /* the line did not fit: refused */
	bool writing;	      /* the reply is being written */
	uint64_t reload;      /* waits for reload number @reload (0: none) */
	size_t in_len;
	char in[RR_CONTROL_MAX_LINE + 2]; /* the line, its newline, a NUL */
	char *out;			  /* the reply */
	size_t out_len, out_off;
	/* capture, trace: after the reply, its session's stream, until the
	 * session ends or the client goes away (1 + enum rr_capture_kind;
	 * 0: none). */
	int stream;
};

struct rr_control {
	int fd; /* -1: no control socket */
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	uint64_t started_ns; /* CLOCK_MONOTONIC, for uptime */
	bool group;	     /* open to a group besides root */
	struct rr_ctl_client clients[RR_CONTROL_CLIENTS];
	/* Reloads, numbered from 1: the last one begun, the last one whose
	 * report is out (and what it returned), and whether another was
	 * asked for while one was under way (inv->reload). */
	uint64_t reload_seq, reload_done;
	int reload_ret;
	bool reload_again;
	uint64_t asked; /* set by the reload command for its client */
	/* The capture and trace sessions (features/capture.c), and the one
	 * a command just began, for its client (1 + its kind). */
	struct rr_capture *capture;
	int streaming;
};

/*
 * Creates the socket at @path, mode 0600, or 0660 with group @group (may
 * be empty). A socket file left by an instance that died is replaced; one
 * that answers belongs to a running instance and is an error
 * (-EADDRINUSE). Returns 0 or -errno with one line in @err.
 */
int rr_control_open(struct rr_control *c, const char *path, const char *group,
		    char *err, size_t errlen);

/* The descriptors to poll (at most 1 + RR_CONTROL_CLIENTS), into @pfd;
 * returns how many. The listening socket is left out while no client
 * could be taken (every slot root's or the service user's). */
int rr_control_pollfds(const struct rr_control *c, struct pollfd *pfd);

/* Moves a reload under way on, and every connection as far as it can
 * without waiting (call every tick, and when a descriptor of
 * rr_control_pollfds() is ready). */
void rr_control_serve(struct rr_control *c, struct rr_invoker *inv,
		      const struct rr_config *cfg);

/* Whether a client is streaming a capture or a trace: the main loop
 * then ticks at least every RR_CONTROL_STREAM_TICK_MS. */
#define RR_CONTROL_STREAM_TICK_MS 10
bool rr_control_streaming(const struct rr_control *c);

/* Closes and removes the socket, and ends a capture or a trace. Safe on
 * one never opened. */
void rr_control_close(struct rr_control *c);

/*
 * Asks for a reload (SIGHUP, and the reload command): cfg's config file
 * read again, with the command line read back, and what changed applied
 * while serving (rr_invoker_reload_start(); the functions' new states
 * made in the background, the rest applied by rr_control_serve() once
 * they are). One at a time: asked for while one is under way, another
 * follows it, once however often asked, reading the file then. The
 * reload command's client gets the report of the reload that began
 * after it asked.
 */
void rr_control_reload(struct rr_control *c, struct rr_invoker *inv,
		       const struct rr_config *cfg);

#endif /* RR_CONTROL_H */
