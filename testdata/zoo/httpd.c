/*
 * httpd.c: the zoo's C server, a single-threaded epoll HTTP/1.1 server that
 * answers every request with the same small 200 response, keeps
 * connections alive, and misbehaves in exactly the way its flags say.
 *
 *   --port-file F      write "127.0.0.1:PORT\n" to F once listening (bound
 *                      to 127.0.0.1:0; written atomically: F.tmp, rename)
 *   --leak-bytes N     leak N bytes of heap per request, never freed
 *                      (default 0: the server allocates nothing per request
 *                      and its RSS does not move by one byte)
 *   --leak-path P      leak only on requests whose path starts with P (a
 *                      leaky dynamic page beside a clean static one; the
 *                      count K runs over those requests alone)
 *   --leak-in W        "heap" (default): the leak is malloc'ed, in the brk
 *                      [heap]; "mmap": it is cut from anonymous mappings
 *                      of 8 MiB each (mmap, a PROT_NONE guard page after
 *                      each so that the kernel does not merge them), which
 *                      a fresh page at a time touches: exact in RSS too
 *   --mode M           "steady" (default) or "shrink": under load, grow a
 *                      scratch pool of --pool-mib MiB (1 MiB more every
 *                      --pool-every requests), and hand all of it back to
 *                      the kernel (munmap, then malloc_trim) once no request
 *                      has come for --idle-ms; the leak is never given back
 *   --pool-mib M       scratch pool size in shrink mode (default 64)
 *   --pool-every K     requests per 1 MiB of pool growth (default 256)
 *   --idle-ms T        idle time before the pool is released (default 1000)
 *   --max-lifetime S   exit after S seconds whatever happens (default 300),
 *                      so that a test that dies cannot leave it running
 *
 * The leak is exact in RSS: glibc (64-bit) serves malloc(m) from a chunk of
 * (m + 8) rounded up to 16 bytes, at least 32, and a single-threaded
 * program that never frees takes every chunk from the top of the main
 * heap, one after the other. So every K requests the server mallocs one
 * chunk of exactly N*K bytes (asking for N*K - 8), with K the smallest
 * count that makes N*K a multiple of 16 and at least 32, and memsets it so
 * its pages are touched. N=120 takes 240 B every 2 requests, N=8 takes
 * 32 B every 4, N=200 takes 400 B every 2. The chunks are chained from a
 * global list head, so no compiler can prove them dead.
 *
 * Build: gcc -O2 -Wall -Wextra -o httpd httpd.c
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_FDS 1024   /* connection slots, indexed by fd */
#define IN_CAP 8192    /* per-connection request buffer */
#define OUT_CAP 8192   /* per-connection response buffer */
#define MAX_POOL 4096  /* MiB */
#define MIB (1u << 20)

static const char RESPONSE[] =
    "HTTP/1.1 200 OK\r\n"
    "Content-Type: text/plain\r\n"
    "Content-Length: 3\r\n"
    "\r\n"
    "ok\n";
static const char RESPONSE_KEEP10[] =
    "HTTP/1.1 200 OK\r\n"
    "Content-Type: text/plain\r\n"
    "Content-Length: 3\r\n"
    "Connection: keep-alive\r\n"
    "\r\n"
    "ok\n";
static const char RESPONSE_CLOSE[] =
    "HTTP/1.1 200 OK\r\n"
    "Content-Type: text/plain\r\n"
    "Content-Length: 3\r\n"
    "Connection: close\r\n"
    "\r\n"
    "ok\n";

/* One connection's state: fixed buffers, so serving allocates nothing. */
struct conn {
	int used;
	int closing;   /* close once out is drained */
	int waiting;   /* polled for EPOLLOUT only: out did not drain */
	size_t in_len;
	size_t body_left; /* request body bytes still to skip */
	size_t out_len, out_off;
	char in[IN_CAP];
	char out[OUT_CAP];
};

static struct conn conns[MAX_FDS];
static int epfd;

/* Leak state. */
static size_t leak_bytes;      /* N, per request */
static size_t leak_every = 1;  /* K */
static unsigned long long served;
static const char *leak_path;    /* NULL: every request leaks */
static unsigned long long leaky; /* requests that leaked */
static void *volatile leak_head; /* chain of leaked chunks */
static int leak_mmap;            /* --leak-in mmap */
static char *region;             /* the current 8 MiB mapping */
static size_t region_used;
#define REGION_BYTES (8u << 20)

/* Shrink mode state. */
static int shrink_mode;
static size_t pool_mib = 64, pool_every = 256;
static long idle_ms = 1000;
static void *pool[MAX_POOL];
static size_t pool_len;        /* MiB held */
static unsigned long long pool_reqs;
static struct timespec last_req;

static void die(const char *what)
{
	perror(what);
	exit(2);
}

static long ms_since(const struct timespec *t)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - t->tv_sec) * 1000 + (now.tv_nsec - t->tv_nsec) / 1000000;
}

/* leak_region cuts n bytes from the current anonymous mapping, mapping a
 * new one when it is full, and touches them. */
static void leak_region(size_t n)
{
	if (region == NULL || region_used + n > REGION_BYTES) {
		long page = sysconf(_SC_PAGESIZE);
		region = mmap(NULL, REGION_BYTES + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (region == MAP_FAILED)
			die("mmap");
		if (mprotect(region + REGION_BYTES, page, PROT_NONE) != 0)
			die("mprotect");
		region_used = 0;
	}
	memset(region + region_used, 0xa5, n);
	region_used += n;
}

/* path_leaks: the request head's target starts with --leak-path (or no
 * path was given). */
static int path_leaks(const char *head, size_t hlen)
{
	if (leak_path == NULL)
		return 1;
	const char *sp = memchr(head, ' ', hlen);
	size_t n = strlen(leak_path);
	return sp != NULL && (size_t)(head + hlen - sp - 1) >= n && memcmp(sp + 1, leak_path, n) == 0;
}

/* leak takes one more chunk of N*K bytes every K leaking requests. */
static void leak(const char *head, size_t hlen)
{
	if (leak_bytes == 0 || !path_leaks(head, hlen) || ++leaky % leak_every != 0)
		return;
	if (leak_mmap) {
		leak_region(leak_bytes * leak_every);
		return;
	}
	size_t m = leak_bytes * leak_every - 8;
	void **p = malloc(m);
	if (p == NULL)
		die("malloc");
	memset(p, 0xa5, m);
	*p = leak_head;
	leak_head = p;
}

/* pool_grow adds 1 MiB of touched scratch memory every pool_every requests
 * while the pool is below its size. */
static void pool_grow(void)
{
	clock_gettime(CLOCK_MONOTONIC, &last_req);
	if (pool_len >= pool_mib || ++pool_reqs % pool_every != 0)
		return;
	void *p = mmap(NULL, MIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		die("mmap");
	memset(p, 0x5a, MIB);
	pool[pool_len++] = p;
}

/* pool_release gives the whole pool back, as a runtime that shrinks when
 * idle does. */
static void pool_release(void)
{
	for (size_t i = 0; i < pool_len; i++)
		munmap(pool[i], MIB);
	pool_len = 0;
	pool_reqs = 0;
	malloc_trim(0);
}

static void conn_close(int fd)
{
	epoll_ctl(epfd, EPOLL_CTL_DEL, fd, NULL);
	close(fd);
	conns[fd].used = 0;
}

/* header_has reports whether the request head holds a header line whose
 * name and value contain name and value (case-insensitive). */
static int header_has(const char *head, size_t len, const char *name, const char *value)
{
	size_t nl = strlen(name);
	const char *p = head, *end = head + len;
	while (p < end) {
		const char *eol = memchr(p, '\n', end - p);
		if (eol == NULL)
			eol = end;
		if ((size_t)(eol - p) > nl && strncasecmp(p, name, nl) == 0 && p[nl] == ':') {
			char v[128];
			size_t vl = eol - p - nl - 1;
			if (vl >= sizeof v)
				vl = sizeof v - 1;
			memcpy(v, p + nl + 1, vl);
			v[vl] = 0;
			if (value == NULL || strcasestr(v, value) != NULL)
				return 1;
		}
		p = eol + 1;
	}
	return 0;
}

static size_t content_length(const char *head, size_t len)
{
	const char *p = head, *end = head + len;
	while (p < end) {
		const char *eol = memchr(p, '\n', end - p);
		if (eol == NULL)
			eol = end;
		if (eol - p > 15 && strncasecmp(p, "Content-Length:", 15) == 0)
			return strtoul(p + 15, NULL, 10);
		p = eol + 1;
	}
	return 0;
}

static int flush_out(int fd)
{
	struct conn *c = &conns[fd];
	while (c->out_off < c->out_len) {
		ssize_t n = send(fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				break;
			return -1;
		}
		c->out_off += n;
	}
	if (c->out_off == c->out_len)
		c->out_off = c->out_len = 0;
	/* Stop reading while the client does not read its answers. */
	int waiting = c->out_len > 0;
	if (waiting != c->waiting) {
		struct epoll_event ev = {.events = waiting ? EPOLLOUT : EPOLLIN, .data.fd = fd};
		epoll_ctl(epfd, EPOLL_CTL_MOD, fd, &ev);
		c->waiting = waiting;
	}
	return 0;
}

/* answer queues the answers to the complete requests at the start of the
 * connection's buffer, until the out buffer is full, and drops them from
 * the buffer. It returns 1 when it stopped on a full out buffer. */
static int answer(struct conn *c)
{
	size_t off = 0;
	int full = 0;
	for (;;) {
		if (c->body_left > 0) {
			size_t skip = c->in_len - off < c->body_left ? c->in_len - off : c->body_left;
			off += skip;
			c->body_left -= skip;
			if (c->body_left > 0)
				break;
		}
		if (c->closing)
			break;
		char *head = c->in + off;
		size_t avail = c->in_len - off;
		char *endp = memmem(head, avail, "\r\n\r\n", 4);
		if (endp == NULL)
			break;
		size_t hlen = endp - head + 4;
		const char *resp = RESPONSE;
		size_t rlen = sizeof RESPONSE - 1;
		const char *eol = memchr(head, '\n', hlen);
		int http10 = eol != NULL && eol - head >= 9 && memcmp(eol - 9, "HTTP/1.0", 8) == 0;
		if (header_has(head, hlen, "Connection", "close") ||
		    (http10 && !header_has(head, hlen, "Connection", "keep-alive"))) {
			resp = RESPONSE_CLOSE;
			rlen = sizeof RESPONSE_CLOSE - 1;
			c->closing = 1;
		} else if (http10) {
			resp = RESPONSE_KEEP10;
			rlen = sizeof RESPONSE_KEEP10 - 1;
		}
		if (c->out_len + rlen > OUT_CAP) {
			full = 1;
			break;
		}
		c->body_left = content_length(head, hlen);
		memcpy(c->out + c->out_len, resp, rlen);
		c->out_len += rlen;
		off += hlen;
		served++;
		leak(head, hlen);
		if (shrink_mode)
			pool_grow();
	}
	memmove(c->in, c->in + off, c->in_len - off);
	c->in_len -= off;
	return full;
}

/* serve answers every complete request in the connection's buffer and
 * sends the answers, as far as the client reads them. It returns -1 when
 * the connection is to be closed. */
static int serve(int fd)
{
	struct conn *c = &conns[fd];
	for (;;) {
		int full = answer(c);
		if (c->in_len == IN_CAP && c->out_len == 0)
			return -1; /* a request head larger than the buffer */
		if (flush_out(fd) < 0)
			return -1;
		if (c->closing && c->out_len == 0)
			return -1;
		/* Done when the buffer holds no complete request, or when the
		 * client must read before more answers fit (EPOLLOUT says when). */
		if (!full || c->out_len > 0)
			return 0;
	}
}

static void on_readable(int fd)
{
	struct conn *c = &conns[fd];
	while (c->used && !c->waiting && c->in_len < IN_CAP) {
		ssize_t n = recv(fd, c->in + c->in_len, IN_CAP - c->in_len, 0);
		if (n == 0) {
			conn_close(fd);
			return;
		}
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				return;
			conn_close(fd);
			return;
		}
		size_t asked = IN_CAP - c->in_len;
		c->in_len += n;
		if (serve(fd) < 0) {
			conn_close(fd);
			return;
		}
		if ((size_t)n < asked)
			return; /* drained; epoll says when more comes */
	}
}

static void on_accept(int lfd)
{
	for (;;) {
		int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			return;
		}
		if (fd >= MAX_FDS) {
			close(fd);
			continue;
		}
		int one = 1;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		struct conn *c = &conns[fd];
		c->used = 1;
		c->closing = c->waiting = 0;
		c->in_len = c->body_left = c->out_len = c->out_off = 0;
		struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd};
		if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
			conn_close(fd);
	}
}

static void write_port_file(const char *path, int port)
{
	char tmp[4096];
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	FILE *f = fopen(tmp, "w");
	if (f == NULL)
		die(tmp);
	fprintf(f, "127.0.0.1:%d\n", port);
	if (fclose(f) != 0)
		die(tmp);
	if (rename(tmp, path) < 0)
		die(path);
}

static void usage(void)
{
	fprintf(stderr, "usage: httpd --port-file F [--leak-bytes N] [--leak-path P] [--leak-in heap|mmap] [--mode steady|shrink] "
			"[--pool-mib M] [--pool-every K] [--idle-ms T] [--max-lifetime S]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *port_file = NULL;
	unsigned max_lifetime = 300;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (i + 1 >= argc)
			usage();
		const char *v = argv[++i];
		if (strcmp(a, "--port-file") == 0)
			port_file = v;
		else if (strcmp(a, "--leak-bytes") == 0)
			leak_bytes = strtoul(v, NULL, 10);
		else if (strcmp(a, "--leak-path") == 0)
			leak_path = v;
		else if (strcmp(a, "--leak-in") == 0 && (strcmp(v, "heap") == 0 || strcmp(v, "mmap") == 0))
			leak_mmap = strcmp(v, "mmap") == 0;
		else if (strcmp(a, "--mode") == 0 && strcmp(v, "steady") == 0)
			shrink_mode = 0;
		else if (strcmp(a, "--mode") == 0 && strcmp(v, "shrink") == 0)
			shrink_mode = 1;
		else if (strcmp(a, "--pool-mib") == 0)
			pool_mib = strtoul(v, NULL, 10);
		else if (strcmp(a, "--pool-every") == 0)
			pool_every = strtoul(v, NULL, 10);
		else if (strcmp(a, "--idle-ms") == 0)
			idle_ms = strtol(v, NULL, 10);
		else if (strcmp(a, "--max-lifetime") == 0)
			max_lifetime = strtoul(v, NULL, 10);
		else
			usage();
	}
	if (port_file == NULL || pool_mib > MAX_POOL || pool_every == 0 || idle_ms <= 0)
		usage();
	if (leak_bytes > 0) {
		while ((leak_bytes * leak_every) % 16 != 0 || leak_bytes * leak_every < 32)
			leak_every++;
	}
	signal(SIGPIPE, SIG_IGN);
	alarm(max_lifetime); /* SIGALRM's default action ends the process */

	int lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (lfd < 0)
		die("socket");
	struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	if (bind(lfd, (struct sockaddr *)&addr, sizeof addr) < 0)
		die("bind");
	if (listen(lfd, 128) < 0)
		die("listen");
	socklen_t alen = sizeof addr;
	if (getsockname(lfd, (struct sockaddr *)&addr, &alen) < 0)
		die("getsockname");
	epfd = epoll_create1(EPOLL_CLOEXEC);
	if (epfd < 0)
		die("epoll_create1");
	struct epoll_event ev = {.events = EPOLLIN, .data.fd = lfd};
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, lfd, &ev) < 0)
		die("epoll_ctl");
	write_port_file(port_file, ntohs(addr.sin_port));

	struct epoll_event evs[64];
	for (;;) {
		/* While a pool is held, wake often enough to see the idle time. */
		int timeout = shrink_mode && pool_len > 0 ? 50 : -1;
		int n = epoll_wait(epfd, evs, 64, timeout);
		if (n < 0 && errno != EINTR)
			die("epoll_wait");
		for (int i = 0; i < n; i++) {
			int fd = evs[i].data.fd;
			if (fd == lfd) {
				on_accept(lfd);
				continue;
			}
			if (!conns[fd].used)
				continue;
			if (evs[i].events & (EPOLLERR | EPOLLHUP)) {
				conn_close(fd);
				continue;
			}
			if (evs[i].events & EPOLLOUT) {
				if (serve(fd) < 0) {
					conn_close(fd);
					continue;
				}
			}
			if (evs[i].events & EPOLLIN)
				on_readable(fd);
		}
		if (shrink_mode && pool_len > 0 && ms_since(&last_req) >= idle_ms)
			pool_release();
	}
}
