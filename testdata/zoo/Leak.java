// Leak.java: the zoo's JVM server, a leaking com.sun.net.httpserver server
// (JDK only) that answers every request with the same small 200 response
// over HTTP/1.1 keep-alive. Run it from source: java Leak.java [flags].
//
//   --port-file F     write "127.0.0.1:PORT\n" to F once listening (bound
//                     to 127.0.0.1:0; written atomically: F.tmp, then
//                     rename)
//   --leak-bytes N    bytes kept per request, never freed (default 4096;
//                     0 = keep nothing)
//   --leak-path P     keep them only on requests whose path starts with P
//                     (default /: every request)
//   --max-lifetime S  exit after S seconds whatever happens (default 300),
//                     so that a test that dies cannot leave it running
//
// Each kept object is a byte[N] filled with 0xa5, so its pages are
// touched; the JVM adds a 16-byte array header and a list slot. RSS
// follows the committed heap, which grows in steps as the collector
// expands it, so the per-request figure is rougher than C's.
import com.sun.net.httpserver.HttpServer;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

public class Leak {
    static final List<byte[]> KEPT = new ArrayList<>();

    public static void main(String[] args) throws Exception {
        String portFile = null;
        int leakBytes = 4096;
        String leakPath = "/";
        long maxLifetime = 300;
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (i + 1 >= args.length) {
                die("flag " + a + " needs a value");
            }
            String v = args[++i];
            switch (a) {
                case "--port-file" -> portFile = v;
                case "--leak-bytes" -> leakBytes = Integer.parseInt(v);
                case "--leak-path" -> leakPath = v;
                case "--max-lifetime" -> maxLifetime = Long.parseLong(v);
                default -> die("unknown flag " + a);
            }
        }
        // Headers and body go out in two writes: without TCP_NODELAY,
        // Nagle's algorithm and the client's delayed ACK hold each
        // response for 40 ms.
        System.setProperty("sun.net.httpserver.nodelay", "true");
        byte[] body = "ok\n".getBytes(StandardCharsets.US_ASCII);
        final int n = leakBytes;
        final String keepOn = leakPath;
        HttpServer srv = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 128);
        srv.createContext("/", ex -> {
            if (n > 0 && ex.getRequestURI().getPath().startsWith(keepOn)) {
                byte[] b = new byte[n];
                Arrays.fill(b, (byte) 0xa5);
                synchronized (KEPT) {
                    KEPT.add(b);
                }
            }
            ex.getRequestBody().readAllBytes();
            ex.getResponseHeaders().set("Content-Type", "text/plain");
            ex.sendResponseHeaders(200, body.length);
            try (OutputStream os = ex.getResponseBody()) {
                os.write(body);
            }
        });
        srv.start();
        if (portFile != null) {
            Path tmp = Path.of(portFile + ".tmp");
            Files.writeString(tmp, "127.0.0.1:" + srv.getAddress().getPort() + "\n");
            Files.move(tmp, Path.of(portFile), StandardCopyOption.ATOMIC_MOVE);
        }
        Thread.sleep(maxLifetime * 1000);
        System.exit(0);
    }

    static void die(String msg) {
        System.err.println("Leak.java: " + msg);
        System.exit(2);
    }
}
