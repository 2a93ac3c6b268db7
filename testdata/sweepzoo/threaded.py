"""threaded.py: the sweep's threaded Python server, a thread per
connection (http.server's ThreadingHTTPServer, HTTP/1.1 keep-alive)
answering "ok" from memory, as a stock Python server does: its headers
and body in two writes (Nagle and the client's delayed ACK hold each
answer about 40 ms, so each connection is throttled) and a listen backlog
of 5 (request_queue_size), which overflows when many clients connect at
once. Its threads share the GIL: at most about one core.

    python3 threaded.py --port-file FILE [--port N] [--max-lifetime S]

It listens on 127.0.0.1 (port 0: any free one), writes "HOST:PORT\\n" to
FILE and exits after --max-lifetime seconds (default 300) whatever happens.
"""

import argparse
import os
import signal
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args):
        pass


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass  # a client that hung up at a level's end: nothing to say


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--max-lifetime", type=int, default=300)
    a = ap.parse_args()
    signal.signal(signal.SIGALRM, lambda *_: os._exit(0))
    signal.alarm(a.max_lifetime)
    srv = Server(("127.0.0.1", a.port), Handler)
    tmp = a.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write("127.0.0.1:%d\n" % srv.server_address[1])
    os.rename(tmp, a.port_file)
    srv.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
