"""leak.py: the zoo's Python server, a leaking http.server (standard library
only) that answers every request with the same small 200 response over
HTTP/1.1 keep-alive.

  --port-file F     write "127.0.0.1:PORT\\n" to F once listening (bound to
                    127.0.0.1:0; written atomically: F.tmp, then rename)
  --leak-bytes N    bytes kept per request, never freed (default 4096;
                    0 = keep nothing)
  --leak-path P     keep them only on requests whose path starts with P
                    (default /: every request)
  --mode M          how they are kept:
                      list   appended to a module-level list (default)
                      cycle  held by a reference cycle, with the cycle
                             collector disabled, so reference counting
                             alone never frees it
  --max-lifetime S  exit after S seconds whatever happens (default 300), so
                    that a test that dies cannot leave it running

Each kept object is a bytes of N bytes filled with 0xa5, so its pages are
touched. CPython adds its object header (33 bytes) and, for list, an 8-byte
slot; the RSS growth per request is therefore a little above N.
"""

import argparse
import gc
import http.server
import os
import threading

KEPT = []  # the list mode's leak


class Cycle:
    """One half of a two-object reference cycle that holds a payload."""

    __slots__ = ("other", "payload")


def keep_in_list(n):
    KEPT.append(b"\xa5" * n)


def keep_in_cycle(n):
    a, b = Cycle(), Cycle()
    a.other, b.other = b, a
    a.payload = b"\xa5" * n
    b.payload = None


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep connections alive
    # The head and the body go out in two writes: without TCP_NODELAY the
    # second waits for the client's delayed ACK, 40 ms a request.
    disable_nagle_algorithm = True
    leak_bytes = 0
    leak_path = "/"
    keep = staticmethod(keep_in_list)

    def do_GET(self):
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        if self.leak_bytes and self.path.startswith(self.leak_path):
            self.keep(self.leak_bytes)
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", "3")
        self.end_headers()
        self.wfile.write(b"ok\n")

    do_POST = do_PUT = do_HEAD = do_GET

    def log_message(self, format, *args):
        pass  # no line per request


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass  # a client that resets its connection is no news


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--port-file", required=True)
    p.add_argument("--leak-bytes", type=int, default=4096)
    p.add_argument("--leak-path", default="/")
    p.add_argument("--mode", choices=("list", "cycle"), default="list")
    p.add_argument("--max-lifetime", type=float, default=300)
    a = p.parse_args()

    Handler.leak_bytes = a.leak_bytes
    Handler.leak_path = a.leak_path
    if a.mode == "cycle":
        gc.disable()
        Handler.keep = staticmethod(keep_in_cycle)

    # Threads, so that a second connection is not held back by the first.
    srv = Server(("127.0.0.1", 0), Handler)
    timer = threading.Timer(a.max_lifetime, lambda: os._exit(0))
    timer.daemon = True
    timer.start()

    tmp = a.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write("127.0.0.1:%d\n" % srv.server_address[1])
    os.rename(tmp, a.port_file)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
