#!/usr/bin/env python3
"""bench/night-hook.py: the night's webhook receiver (bench/night.sh).

Listens on 127.0.0.1:0, writes its port to PORTFILE, and appends every
POST body to OUT as one JSON line: {"t": unix seconds, "path": the URL
path, "body": the JSON received}. soakd's webhook sink posts to /hook,
Alertmanager's webhook receiver to /am. It exits by itself after
LIFETIME seconds (bench/night.sh ends it by its PID before that).

    python3 bench/night-hook.py PORTFILE OUT LIFETIME
"""
import http.server
import json
import os
import sys
import threading
import time

portfile, out, lifetime = sys.argv[1], sys.argv[2], float(sys.argv[3])
lock = threading.Lock()


class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        try:
            doc = json.loads(body)
        except ValueError:
            self.send_response(400)
            self.end_headers()
            return
        line = json.dumps({"t": time.time(), "path": self.path, "body": doc})
        with lock, open(out, "a") as f:
            f.write(line + "\n")
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args):
        pass


srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(portfile + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(portfile + ".tmp", portfile)
threading.Timer(lifetime, srv.shutdown).start()
srv.serve_forever()
