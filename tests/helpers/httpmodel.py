#!/usr/bin/env python3
"""httpmodel: a model server for the proxy's HTTP tests, on Python's own
HTTP/1.1 server, which answers "Expect: 100-continue" with its own 100 as
llama-server, Ollama and uvicorn do. Serves on $PORT (threads, keep-alive):

  GET  /health    200, without a key
  POST /upload    {"bytes": N, "sha256": HEX, "peer": PORT}: the body read whole
  GET  /small     {"small": true, "peer": PORT}
  GET  /headers   {"headers": {NAME: VALUE...}, "peer": PORT}: what reached it
  GET  /stream?n=N  N server-sent events, chunked, then [DONE]
  GET  /close     {"close": true}, ended by the close (no length), which
                  comes in the same segment as the answer
  GET  /cut       a chunked answer cut mid-chunk by the close, the same way
  GET  /big?mb=N  N MiB of zeros, with a length, as fast as they are taken
  GET  /progress  {"mib": N}: how many MiB /big has written so far
  GET  /cors      {"cors": true}, with Access-Control-Allow-Origin: * as
                  llama-server and FastAPI's CORS middleware answer

peer is the proxy's port on the connection, so that a test can tell which
pooled connection carried a request. With --api-key KEY every route but
/health asks for Authorization: Bearer KEY (401 otherwise), as
llama-server --api-key does."""
import hashlib
import http.server
import json
import os
import socket
import sys
import time
import urllib.parse

KEY = None
WRITTEN = 0  # MiB /big has written


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        sys.stderr.write("httpmodel: " + (fmt % args) + "\n")

    def answer(self, code, obj):
        body = (json.dumps(obj) + "\n").encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def keyed(self):
        if KEY is None or self.headers.get("Authorization") == "Bearer " + KEY:
            return True
        n = int(self.headers.get("Content-Length") or 0)
        if n:
            self.rfile.read(n)
        self.answer(401, {"error": {"message": "Invalid API Key", "type": "authentication_error"}})
        return False

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        peer = self.client_address[1]
        if url.path == "/health":
            return self.answer(200, {"status": "ok"})
        if not self.keyed():
            return None
        if url.path == "/small":
            return self.answer(200, {"small": True, "peer": peer})
        if url.path == "/headers":
            return self.answer(200, {"headers": dict(self.headers.items()), "peer": peer})
        if url.path == "/cors":
            body = b'{"cors": true}\n'
            self.send_response(200)
            self.send_header("Access-Control-Allow-Origin", "*")
            self.send_header("Access-Control-Allow-Credentials", "true")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return None
        if url.path == "/stream":
            n = int(urllib.parse.parse_qs(url.query).get("n", ["20"])[0])
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for i in range(n + 1):
                ev = ('data: {"chunk":%d}\n\n' % i if i < n else "data: [DONE]\n\n").encode()
                self.wfile.write(b"%x\r\n%s\r\n" % (len(ev), ev))
                self.wfile.flush()
                time.sleep(0.01)
            self.wfile.write(b"0\r\n\r\n")
            return None
        if url.path == "/big":
            n = int(urllib.parse.parse_qs(url.query).get("mb", ["1"])[0])
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(n << 20))
            self.end_headers()
            mib = bytes(1 << 20)
            global WRITTEN
            WRITTEN = 0
            for _ in range(n):
                self.wfile.write(mib)
                WRITTEN += 1
            return None
        if url.path == "/progress":
            return self.answer(200, {"mib": WRITTEN})
        if url.path in ("/close", "/cut"):
            return self.closing(url.path)
        return self.answer(404, {"error": "not here"})

    def closing(self, path):
        """The answer and the close in one segment (corked by MSG_MORE until
        the shutdown), as a server that writes and closes at once often
        sends them: the proxy sees one edge for both."""
        if path == "/close":
            raw = b'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n{"close": true}\n'
        else:
            raw = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n20\r\ndata: {\"cut\":"
        self.connection.send(raw, socket.MSG_MORE)
        self.connection.shutdown(socket.SHUT_WR)
        self.close_connection = True

    def do_POST(self):
        if not self.keyed():
            return None
        n = int(self.headers.get("Content-Length") or 0)
        h = hashlib.sha256()
        got = 0
        while got < n:
            part = self.rfile.read(min(1 << 20, n - got))
            if not part:
                break
            h.update(part)
            got += len(part)
        if urllib.parse.urlsplit(self.path).path == "/upload":
            return self.answer(200, {"bytes": got, "sha256": h.hexdigest(),
                                     "peer": self.client_address[1]})
        return self.answer(404, {"error": "not here"})


def main():
    global KEY
    args = sys.argv[1:]
    if args[:1] == ["--api-key"] and len(args) == 2:
        KEY = args[1]
    elif args:
        sys.exit("usage: httpmodel.py [--api-key KEY] (PORT in the environment)")
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", int(os.environ["PORT"])), Handler)
    srv.daemon_threads = True
    srv.serve_forever()


if __name__ == "__main__":
    main()
