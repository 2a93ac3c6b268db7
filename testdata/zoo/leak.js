// leak.js: the zoo's Node server, a leaking node:http server that answers
// every request with the same small 200 response over HTTP/1.1 keep-alive.
//
//   --port-file F     write "127.0.0.1:PORT\n" to F once listening (bound to
//                     127.0.0.1:0; written atomically: F.tmp, then rename)
//   --leak-bytes N    bytes kept per request, never freed (default 4096;
//                     0 = keep nothing)
//   --leak-path P     keep them only on requests whose path starts with P
//                     (default /: every request)
//   --mode M          how they are kept:
//                       array     pushed onto a module-level array (default)
//                       listener  captured by a listener added, per request,
//                                 to a long-lived EventEmitter and never
//                                 removed (the classic Node leak)
//   --max-lifetime S  exit after S seconds whatever happens (default 300),
//                     so that a test that dies cannot leave it running
//
// Each kept Buffer is filled with 0xa5, so its pages are touched. Buffers
// live outside the V8 heap; with their JS wrapper the RSS growth per
// request is a little above N.
'use strict';

const fs = require('node:fs');
const http = require('node:http');
const { EventEmitter } = require('node:events');

function flags(argv) {
  const o = { portFile: '', leakBytes: 4096, leakPath: '/', mode: 'array', maxLifetime: 300 };
  const names = {
    '--port-file': (v) => { o.portFile = v; },
    '--leak-bytes': (v) => { o.leakBytes = Number(v); },
    '--leak-path': (v) => { o.leakPath = v; },
    '--mode': (v) => { o.mode = v; },
    '--max-lifetime': (v) => { o.maxLifetime = Number(v); },
  };
  for (let i = 0; i < argv.length; i += 2) {
    const set = names[argv[i]];
    if (!set || i + 1 >= argv.length) usage();
    set(argv[i + 1]);
  }
  if (!o.portFile || !(o.leakBytes >= 0) || !(o.maxLifetime > 0) ||
      !['array', 'listener'].includes(o.mode)) {
    usage();
  }
  return o;
}

function usage() {
  process.stderr.write('usage: node leak.js --port-file F [--leak-bytes N] [--leak-path P] ' +
    '[--mode array|listener] [--max-lifetime S]\n');
  process.exit(2);
}

const o = flags(process.argv.slice(2));

const kept = []; // the array mode's leak
const bus = new EventEmitter(); // the listener mode's long-lived emitter
bus.setMaxListeners(0);

const keep = {
  array: (n) => { kept.push(Buffer.alloc(n, 0xa5)); },
  listener: (n) => {
    const payload = Buffer.alloc(n, 0xa5);
    bus.on('flush', () => payload.length);
  },
}[o.mode];

const server = http.createServer((req, res) => {
  req.resume(); // drain any body
  req.on('end', () => {
    if (o.leakBytes > 0 && req.url.startsWith(o.leakPath)) keep(o.leakBytes);
    res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': '3' });
    res.end('ok\n');
  });
});
server.keepAliveTimeout = 60000;

setTimeout(() => process.exit(0), o.maxLifetime * 1000).unref();
process.on('SIGTERM', () => process.exit(0));

server.listen(0, '127.0.0.1', () => {
  const tmp = o.portFile + '.tmp';
  fs.writeFileSync(tmp, `127.0.0.1:${server.address().port}\n`);
  fs.renameSync(tmp, o.portFile);
});
