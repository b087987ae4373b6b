// SPDX-License-Identifier: GPL-2.0
/*
 * dnstap for the dns function (dnstap.h): the workers' rings, the thread
 * that drains them into protobuf-c messages, and the outputs, each one
 * fstrm I/O thread writing Frame Streams to a file or a unix socket.
 *
 *	[function dns]
 *	dnstap = /var/log/reqrouter/dns.tap	; or unix:PATH, file:PATH
 *	dnstap_sample = 1			; one query in N
 *	dnstap_identity = ns1			; default: the host's name
 *	dnstap_version = reqrouter		; default: reqrouter VERSION
 *
 * Three parties, three memories:
 * - a worker (a thread, or a cell: a process under a system call filter)
 *   writes records into its own ring, in memory from
 *   rr_fn_shared_alloc(): no system call, no lock, no allocation; a ring
 *   without room drops the record and the worker counts it;
 * - the instance's drain thread, in reqrouter's main process (made by
 *   init(), so never in a cell: a fork keeps only the forking thread),
 *   checks each record before it uses it (a cell may have written
 *   anything), encodes it and submits it to the output's fstrm queue;
 *   what the queue refuses, or an output that is down, drops and counts;
 * - the output: one per path in the process, shared by the instances a
 *   reload makes (a file is opened again only when it was moved away,
 *   as logrotate does), with fstrm's I/O thread writing it, which
 *   reopens a file or reconnects a socket every second while it cannot.
 *   Its open, read and write are ours (fstrm_rdwr) only to know when it
 *   goes down and comes back, said in one line each; fstrm_writer makes
 *   the frames and the handshake.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include <fstrm.h>
#include <netinet/in.h>

#include "dnstap.h"
#include "dnstap.pb-c.h"

#ifndef RR_VERSION
#define RR_VERSION "?"
#endif

#define DT_CONTENT_TYPE "protobuf:dnstap.Dnstap"
/* A worker's ring: room for some thousands of records, while the drain
 * thread sleeps a millisecond between passes. */
#define DT_RING_BYTES (1U << 20)
#define DT_SKIP 0xffffffffU /* the rest of the ring is padding */
#define DT_MSG_MAX 65535U   /* a DNS message over TCP */
#define DT_DRAIN_NS 1000000L
/* fstrm's queue between the drain thread and its I/O thread. */
#define DT_QUEUE_LEN 16384
#define DT_REOPEN_S 1
#define DT_TEXT_MAX 255
/* The extra field of a message the in-kernel tier answered. */
#define DT_EXTRA_CACHE "reqrouter: answered in XDP by the reply cache"
#define DT_EXTRA_PROGRAM "reqrouter: answered in XDP by the function's program"

enum { DT_QUERY = 1, DT_RESPONSE = 2 };

/* One record in a ring: 8-byte aligned, its message after it. */
struct dt_rec {
	uint32_t size; /* the record's bytes, this header included; DT_SKIP */
	uint8_t type;  /* DT_QUERY, DT_RESPONSE */
	uint8_t family;
	uint8_t tcp;
	uint8_t from; /* 0: a handler's; RR_TAP_CACHE, RR_TAP_PROGRAM: XDP's */
	uint16_t qport, rport;
	uint32_t msg_len;
	uint64_t qtime_ns, rtime_ns;
	uint8_t qaddr[16], raddr[16];
};

struct dnstap_ring {
	/* Bytes ever written: the worker's, read by the drain thread. */
	uint64_t head __attribute__((aligned(64)));
	/* Bytes ever taken: the drain thread's. */
	uint64_t tail __attribute__((aligned(64)));
	/* Messages of this ring the output lost: the drain thread's. */
	uint64_t lost;
	/* The worker's own: its countdown to the next sampled query, and
	 * how much of lost it counted. */
	uint64_t lost_seen __attribute__((aligned(64)));
	uint32_t countdown;
	uint8_t data[DT_RING_BYTES] __attribute__((aligned(64)));
};

/* An output: a path and the fstrm I/O thread that writes it. */
struct dt_out {
	struct dt_out *next;
	unsigned int refs; /* under outs_lock */
	char path[PATH_MAX];
	bool unix_sock;
	/* What the rdwr opened (under outs_lock): the file's identity. */
	dev_t dev;
	ino_t ino;
	int fd;
	struct fstrm_iothr *iothr;
	struct fstrm_iothr_queue *queue;
	/* The output could not be opened, or a write failed: the drain
	 * thread drops and counts until it is open again. */
	bool down;
	/* A file written to and then not: stays down until a reload
	 * opens it again (reopening it would empty it). */
	bool opened_once, dead;
	bool said;     /* down was said since the last open */
	uint64_t lost; /* frames fstrm dropped while down, to be counted */
	char name[64]; /* the function's, for its log lines */
};

struct dnstap {
	/* The workers', nrings; then the tap's (the in-kernel tier's
	 * answers, written by reqrouter's main thread: dnstap_tap()). */
	struct dnstap_ring *rings;
	uint32_t nrings, taken;
	uint32_t sample;
	char path[PATH_MAX];
	bool unix_sock;
	bool said; /* init() said the output cannot be written */
	char name[64];
	ProtobufCBinaryData identity, version;
	char identity_buf[DT_TEXT_MAX + 1], version_buf[DT_TEXT_MAX + 1];
	int c_messages, c_dropped_ring, c_dropped_output;
	/* The drain thread's. */
	pthread_t thread;
	bool running;
	bool stop;
	struct dt_out *out;
};

static pthread_mutex_t outs_lock = PTHREAD_MUTEX_INITIALIZER;
static struct dt_out *outs;

/* Settings */

static int set_text(const struct rr_fn_config *cfg,
		    const struct rr_fn_setting *s, char **to)
{
	if (strlen(s->value) > DT_TEXT_MAX)
		return rr_fn_error(cfg, s, "%s takes at most %d bytes", s->key,
				   DT_TEXT_MAX);
	free(*to);
	*to = strdup(s->value);
	return *to ? 0 : -ENOMEM;
}

int dnstap_setting(const struct rr_fn_config *cfg,
		   const struct rr_fn_setting *s, struct dnstap_conf *c)
{
	const char *v = s->value;
	uint64_t n;
	int ret;

	if (!strcmp(s->key, "dnstap")) {
		c->kind = DNSTAP_AUTO;
		if (!strncmp(v, "unix:", 5)) {
			c->kind = DNSTAP_UNIX;
			v += 5;
		} else if (!strncmp(v, "file:", 5)) {
			c->kind = DNSTAP_FILE;
			v += 5;
		}
		if (!*v || strlen(v) >= PATH_MAX ||
		    (c->kind == DNSTAP_UNIX &&
		     strlen(v) >= sizeof(((struct sockaddr_un *)0)->sun_path)))
			return rr_fn_error(
				cfg, s,
				"dnstap takes a path (a unix socket's at most %zu bytes), or unix:PATH or file:PATH, not '%s'",
				sizeof(((struct sockaddr_un *)0)->sun_path) - 1,
				s->value);
		free(c->path);
		c->path = strdup(v);
		return c->path ? 1 : -ENOMEM;
	}
	c->said_setting = true; /* one of the others */
	if (!strcmp(s->key, "dnstap_sample")) {
		ret = rr_fn_setting_uint(cfg, s, 1, 1000000000, &n);
		if (!ret)
			c->sample = (uint32_t)n;
		return ret ? ret : 1;
	}
	if (!strcmp(s->key, "dnstap_identity"))
		ret = set_text(cfg, s, &c->identity);
	else if (!strcmp(s->key, "dnstap_version"))
		ret = set_text(cfg, s, &c->version);
	else
		return c->said_setting = false;
	return ret ? ret : 1;
}

void dnstap_conf_free(struct dnstap_conf *c)
{
	free(c->path);
	free(c->identity);
	free(c->version);
	memset(c, 0, sizeof(*c));
}

/* The output: fstrm's rdwr, ours to see it go down and come back */

/*
 * @o cannot be opened or written: said once, until it is open again. A
 * socket is connected again as soon as it can be; a file that was written
 * to is not opened again (that would empty it) until a reload makes a
 * new output.
 */
static void out_down(struct dt_out *o, const char *what, int err)
{
	pthread_mutex_lock(&outs_lock);
	__atomic_store_n(&o->down, true, __ATOMIC_RELEASE);
	if (!o->said)
		rr_fn_log(
			o->name, true,
			"dnstap: %s %s: %s; answering on, %s, messages dropped meanwhile (dnstap_dropped_output)",
			what, o->path, strerror(err),
			o->unix_sock || !o->opened_once
				? "trying again every second"
				: "not written again until a reload (which empties it: move it away first)");
	o->said = true;
	pthread_mutex_unlock(&outs_lock);
}

static fstrm_res out_open(void *obj)
{
	struct dt_out *o = obj;
	struct stat st;
	int fd;

	if (o->unix_sock) {
		struct sockaddr_un sa = { .sun_family = AF_UNIX };

		memcpy(sa.sun_path, o->path, strlen(o->path) + 1);
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd >= 0 &&
		    connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
			int err = errno;

			close(fd);
			fd = -1;
			errno = err;
		}
	} else if (o->opened_once) {
		fd = -1;
		errno = EIO;
	} else {
		fd = open(o->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
			  0640);
	}
	if (fd < 0) {
		out_down(o, o->unix_sock ? "cannot connect to" : "cannot open",
			 errno);
		return fstrm_res_failure;
	}
	pthread_mutex_lock(&outs_lock);
	o->fd = fd;
	o->opened_once = true;
	if (!fstat(fd, &st)) {
		o->dev = st.st_dev;
		o->ino = st.st_ino;
	}
	if (o->said)
		rr_fn_log(o->name, false, "dnstap: writing to %s again",
			  o->path);
	o->said = false;
	__atomic_store_n(&o->down, false, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&outs_lock);
	return fstrm_res_success;
}

static fstrm_res out_close(void *obj)
{
	struct dt_out *o = obj;

	pthread_mutex_lock(&outs_lock);
	if (o->fd >= 0)
		close(o->fd);
	o->fd = -1;
	o->dead = !o->unix_sock && __atomic_load_n(&o->down, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&outs_lock);
	return fstrm_res_success;
}

static fstrm_res out_read(void *obj, void *data, size_t count)
{
	struct dt_out *o = obj;
	uint8_t *p = data;
	ssize_t n;

	while (count) {
		n = read(o->fd, p, count);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			out_down(o, "lost the reader of", n ? errno : EPIPE);
			return fstrm_res_failure;
		}
		p += n;
		count -= (size_t)n;
	}
	return fstrm_res_success;
}

static fstrm_res out_write(void *obj, const struct iovec *iov, int iovcnt)
{
	struct dt_out *o = obj;
	struct iovec v[IOV_MAX];
	struct msghdr m = { .msg_iov = v };
	ssize_t n;

	if (iovcnt > IOV_MAX)
		return fstrm_res_failure;
	memcpy(v, iov, sizeof(*v) * (size_t)iovcnt);
	m.msg_iovlen = (size_t)iovcnt;
	while (m.msg_iovlen) {
		n = o->unix_sock ? sendmsg(o->fd, &m, MSG_NOSIGNAL)
				 : writev(o->fd, m.msg_iov, (int)m.msg_iovlen);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			out_down(o,
				 o->unix_sock ? "lost the reader of"
					      : "cannot write",
				 n ? errno : ENOSPC);
			return fstrm_res_failure;
		}
		while (m.msg_iovlen && (size_t)n >= m.msg_iov->iov_len) {
			n -= (ssize_t)m.msg_iov->iov_len;
			m.msg_iov++;
			m.msg_iovlen--;
		}
		if (m.msg_iovlen) {
			m.msg_iov->iov_base =
				(uint8_t *)m.msg_iov->iov_base + n;
			m.msg_iov->iov_len -= (size_t)n;
		}
	}
	return fstrm_res_success;
}

/* fstrm is done with a frame: written, or dropped while down. */
static void frame_free(void *data, void *arg)
{
	struct dt_out *o = arg;

	if (__atomic_load_n(&o->down, __ATOMIC_ACQUIRE))
		__atomic_add_fetch(&o->lost, 1, __ATOMIC_RELAXED);
	free(data);
}

/*
 * Starts @o's writer and I/O thread, which opens it: at its first
 * message, so that reqrouter --check, which makes and frees instances,
 * never opens (and empties) an output. Under outs_lock. Returns whether
 * it runs.
 */
static bool out_run(struct dt_out *o)
{
	struct fstrm_iothr_options *iopt = NULL;
	struct fstrm_writer_options *wopt = NULL;
	struct fstrm_writer *w = NULL;
	struct fstrm_iothr *iothr;
	struct fstrm_rdwr *rdwr;

	if (o->iothr)
		return true;
	rdwr = fstrm_rdwr_init(o);
	fstrm_rdwr_set_open(rdwr, out_open);
	fstrm_rdwr_set_close(rdwr, out_close);
	fstrm_rdwr_set_write(rdwr, out_write);
	/* Read is the handshake of a bidirectional stream: a socket's. */
	if (o->unix_sock)
		fstrm_rdwr_set_read(rdwr, out_read);
	wopt = fstrm_writer_options_init();
	fstrm_writer_options_add_content_type(wopt, DT_CONTENT_TYPE,
					      strlen(DT_CONTENT_TYPE));
	w = fstrm_writer_init(wopt, &rdwr);
	fstrm_writer_options_destroy(&wopt);
	if (!w) {
		fstrm_rdwr_destroy(&rdwr);
		return false;
	}
	iopt = fstrm_iothr_options_init();
	fstrm_iothr_options_set_input_queue_size(iopt, DT_QUEUE_LEN);
	/* The drain threads of the instances that share it, at a reload. */
	fstrm_iothr_options_set_queue_model(iopt, FSTRM_IOTHR_QUEUE_MODEL_MPSC);
	fstrm_iothr_options_set_reopen_interval(iopt, DT_REOPEN_S);
	/* Woken by the first frame in an empty queue (the threshold is the
	 * room left after it: an empty queue has one entry less than its
	 * length; a signal without a sleeper costs no system call), so that
	 * a frame is written within the flush time-out (a second), not
	 * within two. */
	fstrm_iothr_options_set_queue_notify_threshold(iopt, DT_QUEUE_LEN - 2);
	iothr = fstrm_iothr_init(iopt, &w);
	fstrm_iothr_options_destroy(&iopt);
	if (!iothr) {
		fstrm_writer_destroy(&w);
		return false;
	}
	o->queue = fstrm_iothr_get_input_queue(iothr);
	__atomic_store_n(&o->iothr, iothr, __ATOMIC_RELEASE);
	return true;
}

/*
 * From init(): the output for @dt's path, taken: the one this process has
 * if there is one (a reload's new instance shares its old one's), for a
 * file only if the path is still that file (moved away, as logrotate
 * does: a new one); else a new one, not opened yet. NULL without memory.
 */
static struct dt_out *out_get(const struct dnstap *dt)
{
	struct dt_out *o;
	struct stat st;
	bool here = !stat(dt->path, &st);

	pthread_mutex_lock(&outs_lock);
	for (o = outs; o; o = o->next) {
		if (o->unix_sock != dt->unix_sock || strcmp(o->path, dt->path))
			continue;
		if (!o->unix_sock &&
		    (o->dead ||
		     (o->opened_once &&
		      (!here || st.st_dev != o->dev || st.st_ino != o->ino))))
			continue;
		o->refs++;
		goto out;
	}
	o = calloc(1, sizeof(*o));
	if (!o)
		goto out;
	memcpy(o->path, dt->path, sizeof(o->path));
	memcpy(o->name, dt->name, sizeof(o->name));
	o->unix_sock = dt->unix_sock;
	o->fd = -1;
	o->refs = 1;
	o->said = dt->said;
	o->next = outs;
	outs = o;
out:
	pthread_mutex_unlock(&outs_lock);
	return o;
}

static void out_put(struct dt_out *o)
{
	struct dt_out **p;

	if (!o)
		return;
	pthread_mutex_lock(&outs_lock);
	if (--o->refs) {
		pthread_mutex_unlock(&outs_lock);
		return;
	}
	for (p = &outs; *p; p = &(*p)->next)
		if (*p == o) {
			*p = o->next;
			break;
		}
	pthread_mutex_unlock(&outs_lock);
	/* Writes what is queued, the stop frame, and closes. */
	if (o->iothr)
		fstrm_iothr_destroy(&o->iothr);
	free(o);
}

/* The drain thread */

static void put_time(uint64_t ns, uint64_t *sec, uint32_t *nsec)
{
	*sec = ns / 1000000000U;
	*nsec = (uint32_t)(ns % 1000000000U);
}

/* Record @r (checked) as a dnstap frame for the output. */
static void emit(struct dnstap *dt, struct dnstap_ring *ring,
		 const struct dt_rec *r, const uint8_t *msg)
{
	Dnstap__Message m = DNSTAP__MESSAGE__INIT;
	Dnstap__Dnstap d = DNSTAP__DNSTAP__INIT;
	size_t alen = r->family == 6 ? 16 : 4, n;
	struct dt_out *o = dt->out;
	struct fstrm_iothr *iothr;
	uint8_t *buf;

	iothr = __atomic_load_n(&o->iothr, __ATOMIC_ACQUIRE);
	if (!iothr) {
		pthread_mutex_lock(&outs_lock);
		if (out_run(o))
			iothr = o->iothr;
		pthread_mutex_unlock(&outs_lock);
	}
	if (!iothr || !o->queue || __atomic_load_n(&o->down, __ATOMIC_ACQUIRE))
		goto lost;
	m.type = r->type == DT_QUERY ? DNSTAP__MESSAGE__TYPE__AUTH_QUERY
				     : DNSTAP__MESSAGE__TYPE__AUTH_RESPONSE;
	m.has_socket_family = m.has_socket_protocol = 1;
	m.socket_family = r->family == 6 ? DNSTAP__SOCKET_FAMILY__INET6
					 : DNSTAP__SOCKET_FAMILY__INET;
	m.socket_protocol = r->tcp ? DNSTAP__SOCKET_PROTOCOL__TCP
				   : DNSTAP__SOCKET_PROTOCOL__UDP;
	m.has_query_address = m.has_response_address = 1;
	m.query_address.data = (uint8_t *)r->qaddr;
	m.query_address.len = alen;
	m.response_address.data = (uint8_t *)r->raddr;
	m.response_address.len = alen;
	m.has_query_port = m.has_response_port = 1;
	m.query_port = r->qport;
	m.response_port = r->rport;
	m.has_query_time_sec = m.has_query_time_nsec = 1;
	put_time(r->qtime_ns, &m.query_time_sec, &m.query_time_nsec);
	if (r->type == DT_QUERY) {
		m.has_query_message = 1;
		m.query_message.data = (uint8_t *)msg;
		m.query_message.len = r->msg_len;
	} else {
		m.has_response_time_sec = m.has_response_time_nsec = 1;
		put_time(r->rtime_ns, &m.response_time_sec,
			 &m.response_time_nsec);
		m.has_response_message = 1;
		m.response_message.data = (uint8_t *)msg;
		m.response_message.len = r->msg_len;
	}
	d.type = DNSTAP__DNSTAP__TYPE__MESSAGE;
	d.message = &m;
	/* Answered in XDP: which part of it, for a reader to tell. */
	if (r->from) {
		d.has_extra = 1;
		d.extra.data =
			(uint8_t *)(r->from == RR_TAP_CACHE ? DT_EXTRA_CACHE
							    : DT_EXTRA_PROGRAM);
		d.extra.len = strlen((const char *)d.extra.data);
	}
	d.has_identity = dt->identity.len > 0;
	d.identity = dt->identity;
	d.has_version = dt->version.len > 0;
	d.version = dt->version;
	n = dnstap__dnstap__get_packed_size(&d);
	buf = malloc(n);
	if (!buf)
		goto lost;
	dnstap__dnstap__pack(&d, buf);
	if (fstrm_iothr_submit(iothr, o->queue, buf, n, frame_free, o) ==
	    fstrm_res_success)
		return;
	free(buf);
lost:
	__atomic_store_n(&ring->lost, ring->lost + 1, __ATOMIC_RELAXED);
}

/* What @ring holds now, each record checked before it is used: a cell
 * writes it, and may have written anything. Returns records taken. */
static unsigned int drain_ring(struct dnstap *dt, struct dnstap_ring *ring)
{
	uint64_t tail = ring->tail,
		 head = __atomic_load_n(&ring->head, __ATOMIC_ACQUIRE);
	unsigned int n = 0;
	struct dt_rec r;
	uint32_t pos;

	if (head - tail > DT_RING_BYTES) /* not a ring's: start over */
		tail = head;
	while (tail != head) {
		pos = (uint32_t)(tail & (DT_RING_BYTES - 1));
		memcpy(&r.size, ring->data + pos, sizeof(r.size));
		if (r.size == DT_SKIP) {
			/* Padding to the end: never past the head. */
			if (DT_RING_BYTES - pos > head - tail) {
				tail = head;
				break;
			}
			tail += DT_RING_BYTES - pos;
			continue;
		}
		if (DT_RING_BYTES - pos < sizeof(r)) {
			tail = head;
			break;
		}
		memcpy(&r, ring->data + pos, sizeof(r));
		if (r.size < sizeof(r) || r.size > DT_RING_BYTES - pos ||
		    r.size % 8 || r.msg_len > r.size - sizeof(r) ||
		    r.size > head - tail) {
			tail = head;
			break;
		}
		emit(dt, ring, &r, ring->data + pos + sizeof(r));
		tail += r.size;
		n++;
	}
	__atomic_store_n(&ring->tail, tail, __ATOMIC_RELEASE);
	return n;
}

static void *drain(void *arg)
{
	struct timespec nap = { 0, DT_DRAIN_NS };
	struct dnstap *dt = arg;
	unsigned int i, k, n, last = 0;
	uint64_t lost;
	bool stop;

	for (;;) {
		stop = __atomic_load_n(&dt->stop, __ATOMIC_ACQUIRE);
		for (n = 0, i = 0;
		     i < __atomic_load_n(&dt->taken, __ATOMIC_ACQUIRE); i++) {
			k = drain_ring(dt, &dt->rings[i]);
			if (k)
				last = i;
			n += k;
		}
		k = drain_ring(dt, &dt->rings[dt->nrings]);
		if (k)
			last = dt->nrings;
		n += k;
		/* Frames fstrm dropped (of any ring), for the worker that
		 * wrote last to count at its next message. */
		lost = __atomic_exchange_n(&dt->out->lost, 0, __ATOMIC_RELAXED);
		if (lost)
			__atomic_store_n(&dt->rings[last].lost,
					 dt->rings[last].lost + lost,
					 __ATOMIC_RELAXED);
		if (stop)
			break;
		if (!n)
			nanosleep(&nap, NULL);
	}
	return NULL;
}

/* The instance */

/* Whether @path, as it is now, can be written: one line if not. */
static void check_output(struct dnstap *dt)
{
	struct stat st;
	char dir[PATH_MAX];
	int err = 0;

	if (dt->unix_sock) {
		if (stat(dt->path, &st))
			err = errno;
		else if (!S_ISSOCK(st.st_mode))
			err = ENOTSOCK;
		else if (access(dt->path, W_OK))
			err = errno;
	} else if (!stat(dt->path, &st)) {
		if (S_ISDIR(st.st_mode))
			err = EISDIR;
		else if (access(dt->path, W_OK))
			err = errno;
	} else {
		memcpy(dir, dt->path, sizeof(dir));
		if (access(dirname(dir), W_OK | X_OK))
			err = errno;
	}
	if (!err)
		return;
	rr_fn_log(
		dt->name, true,
		"dnstap: cannot %s %s: %s; answering on, trying again every second, messages dropped meanwhile (dnstap_dropped_output)",
		dt->unix_sock ? "connect to" : "write", dt->path,
		strerror(err));
	dt->said = true;
}

static void set_field(ProtobufCBinaryData *f, char *buf, const char *text)
{
	size_t n = strlen(text);

	if (n > DT_TEXT_MAX)
		n = DT_TEXT_MAX;
	memcpy(buf, text, n);
	buf[n] = '\0';
	f->data = (uint8_t *)buf;
	f->len = n;
}

int dnstap_new(const struct rr_fn_config *cfg, const struct dnstap_conf *c,
	       struct dnstap **out)
{
	static const char *const names[][2] = {
		{ "dnstap_messages",
		  "dnstap messages put in a worker's ring for the output." },
		{ "dnstap_dropped_ring",
		  "dnstap messages dropped: the worker's ring was full." },
		{ "dnstap_dropped_output",
		  "dnstap messages dropped: the output's queue was full, or it was down." },
	};
	char host[DT_TEXT_MAX + 1] = "";
	struct stat st;
	struct dnstap *dt;
	int idx[3], ret;
	size_t i;

	*out = NULL;
	if (!c->path) {
		if (c->said_setting)
			return rr_fn_error(
				cfg, NULL,
				"dnstap_sample, dnstap_identity and dnstap_version need dnstap = PATH");
		return 0;
	}
	for (i = 0; i < 3; i++) {
		idx[i] = rr_fn_counter(cfg, names[i][0], names[i][1]);
		if (idx[i] < 0)
			return idx[i];
	}
	dt = calloc(1, sizeof(*dt));
	if (!dt)
		return -ENOMEM;
	snprintf(dt->name, sizeof(dt->name), "%s", cfg->name);
	snprintf(dt->path, sizeof(dt->path), "%s", c->path);
	dt->unix_sock = c->kind == DNSTAP_UNIX ||
			(c->kind == DNSTAP_AUTO && !stat(c->path, &st) &&
			 S_ISSOCK(st.st_mode));
	dt->sample = c->sample ? c->sample : 1;
	dt->c_messages = idx[0];
	dt->c_dropped_ring = idx[1];
	dt->c_dropped_output = idx[2];
	if (!c->identity)
		gethostname(host, sizeof(host) - 1);
	set_field(&dt->identity, dt->identity_buf,
		  c->identity ? c->identity : host);
	set_field(&dt->version, dt->version_buf,
		  c->version ? c->version : "reqrouter " RR_VERSION);
	dt->nrings = cfg->workers ? cfg->workers : 1;
	dt->rings =
		rr_fn_shared_alloc(cfg, sizeof(*dt->rings) * (dt->nrings + 1));
	if (!dt->rings) {
		free(dt);
		return -ENOMEM;
	}
	for (i = 0; i < dt->nrings; i++)
		dt->rings[i].countdown = 1;
	/* The reply cache's answers, sampled in XDP as the workers sample
	 * theirs. */
	ret = rr_fn_tap(cfg, dt->sample, dnstap_tap, dt);
	if (ret) {
		free(dt);
		return ret;
	}
	check_output(dt);
	dt->out = out_get(dt);
	if (!dt->out) {
		free(dt);
		return -ENOMEM;
	}
	ret = pthread_create(&dt->thread, NULL, drain, dt);
	if (ret) {
		out_put(dt->out);
		free(dt);
		return rr_fn_error(cfg, NULL,
				   "dnstap: cannot start a thread: %s",
				   strerror(ret));
	}
	dt->running = true;
	*out = dt;
	return 0;
}

void dnstap_free(struct dnstap *dt)
{
	if (!dt)
		return;
	if (dt->running) {
		__atomic_store_n(&dt->stop, true, __ATOMIC_RELEASE);
		pthread_join(dt->thread, NULL);
	}
	out_put(dt->out);
	free(dt);
}

struct dnstap_ring *dnstap_ring_take(struct dnstap *dt)
{
	uint32_t i = __atomic_load_n(&dt->taken, __ATOMIC_RELAXED);

	if (i >= dt->nrings)
		return NULL;
	/* Seen by the drain thread from its next pass. */
	__atomic_store_n(&dt->taken, i + 1, __ATOMIC_RELEASE);
	return &dt->rings[i];
}

/* The worker's side */

static uint64_t ns_of(const struct timespec *t)
{
	return (uint64_t)t->tv_sec * 1000000000U + (uint64_t)t->tv_nsec;
}

/* Room for a record of @size bytes at the ring's head, or NULL. */
static struct dt_rec *reserve(struct dnstap_ring *r, uint32_t size,
			      uint64_t *head)
{
	uint64_t tail = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
	uint32_t pos = (uint32_t)(r->head & (DT_RING_BYTES - 1));
	uint32_t pad = DT_RING_BYTES - pos < size ? DT_RING_BYTES - pos : 0;
	uint32_t skip = DT_SKIP;

	if (r->head + pad + size - tail > DT_RING_BYTES)
		return NULL;
	if (pad)
		memcpy(r->data + pos, &skip, sizeof(skip));
	*head = r->head + pad + size;
	return (struct dt_rec *)(r->data + (pad ? 0 : pos));
}

/* A message of @type into @r: its response's time @rtime_ns (0: now),
 * answered by @from (0: the handler; RR_TAP_*). */
static void put(const struct dnstap *dt, struct dnstap_ring *r,
		const struct rr_request *req, int type, const uint8_t *msg,
		size_t len, const struct dnstap_times *t, uint64_t rtime_ns,
		uint8_t from)
{
	uint32_t size = (uint32_t)((sizeof(struct dt_rec) + len + 7) & ~7UL);
	size_t alen = req->family == AF_INET6 ? 16 : 4;
	struct timespec now;
	struct dt_rec *rec;
	uint64_t head, l;

	l = __atomic_load_n(&r->lost, __ATOMIC_RELAXED);
	if (l != r->lost_seen) {
		rr_fn_count(req, dt->c_dropped_output, l - r->lost_seen);
		r->lost_seen = l;
	}
	rec = len <= DT_MSG_MAX ? reserve(r, size, &head) : NULL;
	if (!rec) {
		rr_fn_count(req, dt->c_dropped_ring, 1);
		return;
	}
	rec->size = size;
	rec->type = (uint8_t)type;
	rec->family = req->family == AF_INET6 ? 6 : 4;
	rec->tcp = req->transport == RR_TRANSPORT_TCP;
	rec->from = from;
	rec->qport = req->src_port;
	rec->rport = req->dst_port;
	rec->msg_len = (uint32_t)len;
	rec->qtime_ns = ns_of(&t->query);
	rec->rtime_ns = rtime_ns;
	if (type == DT_RESPONSE && !rtime_ns) {
		clock_gettime(CLOCK_REALTIME, &now);
		rec->rtime_ns = ns_of(&now);
	}
	memcpy(rec->qaddr, &req->src, alen);
	memcpy(rec->raddr, &req->dst, alen);
	memcpy(rec + 1, msg, len);
	__atomic_store_n(&r->head, head, __ATOMIC_RELEASE);
	rr_fn_count(req, dt->c_messages, 1);
}

bool dnstap_query(const struct dnstap *dt, struct dnstap_ring *r,
		  const struct rr_request *req, const uint8_t *msg, size_t len,
		  struct dnstap_times *t)
{
	if (!r || --r->countdown)
		return false;
	r->countdown = dt->sample;
	clock_gettime(CLOCK_REALTIME, &t->query);
	put(dt, r, req, DT_QUERY, msg, len, t, 0, 0);
	return true;
}

void dnstap_response(const struct dnstap *dt, struct dnstap_ring *r,
		     const struct rr_request *req, const uint8_t *msg,
		     size_t len, const struct dnstap_times *t)
{
	put(dt, r, req, DT_RESPONSE, msg, len, t, 0, 0);
}

void dnstap_tap(void *arg, const struct rr_tap_answer *a)
{
	struct dnstap *dt = arg;
	struct dnstap_ring *r = &dt->rings[dt->nrings];
	struct dnstap_times t = {
		.query = { .tv_sec = (time_t)(a->arrival_ns / 1000000000U),
			   .tv_nsec = (long)(a->arrival_ns % 1000000000U) },
	};
	uint8_t from = (uint8_t)a->from;

	put(dt, r, a->req, DT_QUERY, a->query, a->query_len, &t, 0, from);
	put(dt, r, a->req, DT_RESPONSE, a->reply, a->reply_len, &t, a->sent_ns,
	    from);
}
