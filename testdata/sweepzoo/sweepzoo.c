/*
 * sweepzoo: the sweep's test servers, each with a known knee. HTTP/1.1 on
 * 127.0.0.1, --port (default 0: any free one); it writes "HOST:PORT\n" to --port-file and exits
 * after --max-lifetime seconds whatever happens.
 *
 *   --mode backlog  listen(fd, 1), and an accept loop that stalls
 *                   --stall-ms every --stall-every-ms (a collection, a
 *                   slow disk) and otherwise hands each connection to a
 *                   thread that answers one request and closes
 *                   ("Connection: close"). In a stall the accept queue
 *                   (two slots) fills and the other clients' SYNs are
 *                   dropped (ListenOverflows); their retransmits, a
 *                   second later, find the queue drained: latencies
 *                   cluster near 1 s (listen_queue).
 *   --mode select   one thread, select(): answers each request --delay-ms
 *                   after it came; a connection whose fd would reach
 *                   FD_SETSIZE - 1 is closed at once and the listener
 *                   left alone until another ends: it stops at 1023 fds
 *                   (fd_limit).
 *   --mode burn     the select() server, answering at once after spinning
 *                   --burn-us of CPU time on its one thread: it saturates
 *                   one core (cpu).
 *   --mode serial   the select() server with listen(fd, 2), answering each
 *                   request after a blocking sleep of --delay-ms on its one
 *                   thread: one request at a time, at most 1000/delay-ms
 *                   req/s whatever the clients, at about 1 % of a core
 *                   (serial).
 *   --mode threads  a thread per connection that sleeps --delay-ms before
 *                   each answer: throughput grows with the clients while
 *                   the server idles (per_connection). With --max-fds N
 *                   (RLIMIT_NOFILE) it stops at N fds (fd_limit).
 *
 * Build: cc -O2 -pthread -o sweepzoo sweepzoo.c
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static const char ok_keep[] = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Type: text/plain\r\n\r\nok";
static const char ok_close[] = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok";
static int max_fds = 0, listen_port = 0, delay_ms = 10, stall_ms = 0, stall_every_ms = 1500, burn_us = 0, block_ms = 0;

static double now_ms(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void sleep_ms(int ms) {
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) == -1 && errno == EINTR) {
	}
}

static int listener(int backlog, const char *port_file) {
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)listen_port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t l = sizeof a;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) < 0 || listen(fd, backlog) < 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &l) < 0) {
		perror("listen");
		exit(2);
	}
	char tmp[4096];
	snprintf(tmp, sizeof tmp, "%s.tmp", port_file);
	FILE *f = fopen(tmp, "w");
	if (!f || fprintf(f, "127.0.0.1:%d\n", ntohs(a.sin_port)) < 0 || fclose(f) != 0 || rename(tmp, port_file) != 0) {
		perror("port file");
		exit(2);
	}
	return fd;
}

/* request_end: the length of the first complete request in b, or 0. */
static size_t request_end(const char *b, size_t n) {
	for (size_t i = 3; i < n; i++)
		if (b[i - 3] == '\r' && b[i - 2] == '\n' && b[i - 1] == '\r' && b[i] == '\n')
			return i + 1;
	return 0;
}

/* wants_close: the request of n bytes at b asks to close the connection
 * after its answer (soakd's preflight does). */
static int wants_close(const char *b, size_t n) {
	char tmp[4097];
	memcpy(tmp, b, n < 4096 ? n : 4096);
	tmp[n < 4096 ? n : 4096] = 0;
	return strcasestr(tmp, "\r\nconnection: close") != NULL;
}

static void write_all(int fd, const char *s, size_t n) {
	while (n > 0) {
		ssize_t w = write(fd, s, n);
		if (w <= 0)
			return;
		s += w, n -= (size_t)w;
	}
}

static void *answer_once(void *arg) {
	int c = (int)(long)arg;
	char b[4096];
	size_t n = 0;
	while (n < sizeof b && !request_end(b, n)) {
		ssize_t r = read(c, b + n, sizeof b - n);
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	if (request_end(b, n))
		write_all(c, ok_close, sizeof ok_close - 1);
	close(c);
	return NULL;
}

static void spawn(void *(*fn)(void *), int c) {
	static pthread_attr_t at;
	static int ready;
	if (!ready) {
		pthread_attr_init(&at);
		pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
		pthread_attr_setstacksize(&at, 256 * 1024);
		ready = 1;
	}
	pthread_t t;
	if (pthread_create(&t, &at, fn, (void *)(long)c) != 0)
		close(c);
}

static void serve_backlog(int lfd) {
	double next_stall = now_ms() + stall_every_ms;
	for (;;) {
		if (stall_ms > 0 && now_ms() >= next_stall) {
			sleep_ms(stall_ms);
			next_stall = now_ms() + stall_every_ms;
		}
		if (delay_ms > 0)
			sleep_ms(delay_ms);
		int c = accept(lfd, NULL, NULL);
		if (c >= 0)
			spawn(answer_once, c);
	}
}

struct conn {
	int open;
	size_t n;
	double due; /* when the pending answer is due; 0: none */
	char buf[4096];
};

static struct conn conns[FD_SETSIZE];

/* select_accept takes one connection, unless its fd would reach
 * FD_SETSIZE: then it is closed again and the listener is left alone
 * until a connection ends (*full). The listener is non-blocking: 0 when
 * there was none to take. */
static int select_accept(int lfd, int *maxfd, int *full) {
	int c = accept4(lfd, NULL, NULL, 0);
	if (c < 0)
		return 0;
	if (c >= FD_SETSIZE - 1) {
		close(c);
		*full = 1;
		return 0;
	}
	conns[c].open = 1, conns[c].n = 0, conns[c].due = 0;
	if (c > *maxfd)
		*maxfd = c;
	return 1;
}

static void select_read(int fd, int *full) {
	struct conn *k = &conns[fd];
	ssize_t r = read(fd, k->buf + k->n, sizeof k->buf - k->n);
	if (r <= 0) {
		close(fd);
		k->open = 0, k->n = 0, k->due = 0;
		*full = 0;
		return;
	}
	k->n += (size_t)r;
	if (k->due == 0 && request_end(k->buf, k->n))
		k->due = now_ms() + delay_ms;
}

/* burn spins until the thread has used us microseconds of CPU time. */
static void burn(int us) {
	struct timespec a, b;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	do
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
	while ((b.tv_sec - a.tv_sec) * 1000000L + (b.tv_nsec - a.tv_nsec) / 1000 < us);
}

static void select_answer(int fd, double now) {
	struct conn *k = &conns[fd];
	if (!k->open || k->due == 0 || k->due > now)
		return;
	if (burn_us > 0)
		burn(burn_us);
	if (block_ms > 0)
		sleep_ms(block_ms);
	size_t e = request_end(k->buf, k->n);
	if (wants_close(k->buf, e)) {
		write_all(fd, ok_close, sizeof ok_close - 1);
		shutdown(fd, SHUT_WR);
	} else {
		write_all(fd, ok_keep, sizeof ok_keep - 1);
	}
	memmove(k->buf, k->buf + e, k->n - e);
	k->n -= e;
	k->due = request_end(k->buf, k->n) ? now + delay_ms : 0;
}

static void serve_select(int lfd) {
	int maxfd = lfd, full = 0;
	for (;;) {
		fd_set rd;
		FD_ZERO(&rd);
		double now = now_ms(), next = now + 1000;
		int top = lfd;
		for (int fd = lfd + 1; fd <= maxfd; fd++) {
			if (!conns[fd].open)
				continue;
			top = fd;
			FD_SET(fd, &rd);
			if (conns[fd].due > 0 && conns[fd].due < next)
				next = conns[fd].due;
		}
		maxfd = top;
		if (!full)
			FD_SET(lfd, &rd);
		double wait = next > now ? next - now : 0;
		struct timeval tv = {(time_t)(wait / 1000), (suseconds_t)((long)wait % 1000) * 1000};
		if (select(maxfd + 1, &rd, NULL, NULL, &tv) < 0)
			continue;
		for (int i = 0; i < 64 && !full && FD_ISSET(lfd, &rd); i++)
			if (!select_accept(lfd, &maxfd, &full))
				break;
		for (int fd = lfd + 1; fd <= maxfd; fd++)
			if (conns[fd].open && FD_ISSET(fd, &rd))
				select_read(fd, &full);
		now = now_ms();
		for (int fd = lfd + 1; fd <= maxfd; fd++)
			select_answer(fd, now);
	}
}

static void *thread_conn(void *arg) {
	int c = (int)(long)arg;
	char b[4096];
	size_t n = 0;
	for (;;) {
		size_t e;
		while (!(e = request_end(b, n))) {
			if (n == sizeof b)
				goto out;
			ssize_t r = read(c, b + n, sizeof b - n);
			if (r <= 0)
				goto out;
			n += (size_t)r;
		}
		sleep_ms(delay_ms);
		if (wants_close(b, e)) {
			write_all(c, ok_close, sizeof ok_close - 1);
			goto out;
		}
		write_all(c, ok_keep, sizeof ok_keep - 1);
		memmove(b, b + e, n - e);
		n -= e;
	}
out:
	close(c);
	return NULL;
}

static void serve_threads(int lfd) {
	for (;;) {
		int c = accept(lfd, NULL, NULL);
		if (c >= 0)
			spawn(thread_conn, c);
		else if (errno == EMFILE || errno == ENFILE)
			sleep_ms(10); /* at the fd limit: the rest wait in the accept queue */
	}
}

static void on_alarm(int sig) {
	(void)sig;
	_exit(0);
}

int main(int argc, char **argv) {
	const char *mode = "threads", *port_file = NULL;
	int lifetime = 300;
	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--mode"))
			mode = argv[i + 1];
		else if (!strcmp(argv[i], "--delay-ms"))
			delay_ms = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--max-fds"))
			max_fds = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--port"))
			listen_port = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--burn-us"))
			burn_us = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--stall-ms"))
			stall_ms = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--stall-every-ms"))
			stall_every_ms = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--port-file"))
			port_file = argv[i + 1];
		else if (!strcmp(argv[i], "--max-lifetime"))
			lifetime = atoi(argv[i + 1]);
		else {
			fprintf(stderr, "sweepzoo: unknown flag %s\n", argv[i]);
			return 2;
		}
	}
	if (!port_file) {
		fprintf(stderr, "sweepzoo: --port-file FILE is required\n");
		return 2;
	}
	if (max_fds > 0) {
		struct rlimit rl = {(rlim_t)max_fds, (rlim_t)max_fds};
		if (setrlimit(RLIMIT_NOFILE, &rl) != 0) {
			perror("setrlimit");
			return 2;
		}
	}
	signal(SIGPIPE, SIG_IGN);
	signal(SIGALRM, on_alarm);
	alarm((unsigned)lifetime);
	if (!strcmp(mode, "backlog"))
		serve_backlog(listener(1, port_file));
	else if (!strcmp(mode, "select") || !strcmp(mode, "burn") || !strcmp(mode, "serial")) {
		if (!strcmp(mode, "burn"))
			delay_ms = 0;
		if (!strcmp(mode, "serial"))
			block_ms = delay_ms, delay_ms = 0;
		int lfd = listener(!strcmp(mode, "serial") ? 2 : 128, port_file);
		fcntl(lfd, F_SETFL, O_NONBLOCK);
		serve_select(lfd);
	}
	else if (!strcmp(mode, "threads"))
		serve_threads(listener(1024, port_file));
	fprintf(stderr, "sweepzoo: unknown --mode %s (backlog, select, burn, serial, threads)\n", mode);
	return 2;
}
