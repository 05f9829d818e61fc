#!/usr/bin/env python3
"""hubserver: a stand-in for the Hugging Face hub's API, for vram fit
--online's tests (tests/cli/fit_hub.sh): the repositories are the folders
ROOT/ORG/REPO, served as the hub serves them:

  GET /api/models/ORG/REPO/tree/main?recursive=true
      the files (a folder one level down too): [{"type", "path", "size",
      "oid", "lfs": {"oid", "size"}}], as the hub's API lists them
  GET /ORG/REPO/resolve/main/PATH
      a redirect (302) to /cdn/ORG/REPO/PATH, as the hub sends its large
      files to its CDN; there, the file, or its bytes in a Range header's
      range (206)

A repository whose name begins with "gated" answers 401 without an
Authorization: Bearer header. Every request is logged to LOG as
"METHOD PATH RANGE AUTH" (RANGE "-" without one, AUTH "auth" or "-"). The
port is written to PORTFILE once it listens.

usage: hubserver.py ROOT LOG PORTFILE"""
import hashlib
import json
import os
import re
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ROOT, LOG, PORTFILE = sys.argv[1], sys.argv[2], sys.argv[3]
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def repo_dir(org, repo):
    if not NAME.match(org) or not NAME.match(repo):
        return None
    d = os.path.join(ROOT, org, repo)
    return d if os.path.isdir(d) else None


def oid(path, st):
    # a blob id that changes with the file (the hub's is its sha256)
    return hashlib.sha256(f"{path}:{st.st_size}:{st.st_mtime_ns}".encode()).hexdigest()


class Hub(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def note(self):
        with open(LOG, "a") as f:
            f.write("%s %s %s %s\n" % (self.command, self.path, self.headers.get("Range", "-"),
                                       "auth" if self.headers.get("Authorization") else "-"))

    def answer(self, code, body=b"", ctype="application/json", extra=None):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def gated(self, repo):
        return repo.startswith("gated") and not self.headers.get("Authorization", "").startswith("Bearer ")

    def do_GET(self):
        self.note()
        path = self.path.split("?")[0]
        m = re.match(r"^/api/models/([^/]+)/([^/]+)/tree/main$", path)
        if m:
            d = repo_dir(*m.groups())
            if not d:
                return self.answer(404, b'{"error":"Repository not found"}')
            if self.gated(m.group(2)):
                return self.answer(401, b'{"error":"Access to this repository is restricted"}')
            files = []
            for top in sorted(os.listdir(d)):
                full = os.path.join(d, top)
                names = [top] if os.path.isfile(full) else \
                    [top + "/" + n for n in sorted(os.listdir(full))] if os.path.isdir(full) else []
                if os.path.isdir(full):
                    files.append({"type": "directory", "oid": "0" * 40, "size": 0, "path": top})
                for n in names:
                    st = os.stat(os.path.join(d, n))
                    o = oid(n, st)
                    files.append({"type": "file", "oid": o[:40], "size": st.st_size, "path": n,
                                  "lfs": {"oid": o, "size": st.st_size, "pointerSize": 134}})
            return self.answer(200, json.dumps(files).encode())
        m = re.match(r"^/([^/]+)/([^/]+)/resolve/main/(.+)$", path)
        if m:
            if not repo_dir(m.group(1), m.group(2)):
                return self.answer(404, b"Repository not found", "text/plain")
            if self.gated(m.group(2)):
                return self.answer(401, b"Access restricted", "text/plain")
            return self.answer(302, b"", "text/plain", {"Location": "/cdn/" + "/".join(m.groups())})
        m = re.match(r"^/cdn/([^/]+)/([^/]+)/(.+)$", path)
        if m:
            d = repo_dir(m.group(1), m.group(2))
            rel = m.group(3)
            if not d or ".." in rel.split("/") or not os.path.isfile(os.path.join(d, rel)):
                return self.answer(404, b"Entry not found", "text/plain")
            full = os.path.join(d, rel)
            size = os.path.getsize(full)
            r = re.match(r"^bytes=(\d+)-(\d*)$", self.headers.get("Range", ""))
            with open(full, "rb") as f:
                if not r:
                    return self.answer(200, f.read(), "application/octet-stream")
                a = int(r.group(1))
                b = min(int(r.group(2)) if r.group(2) else size - 1, size - 1)
                if a >= size:
                    return self.answer(416, b"", "text/plain", {"Content-Range": f"bytes */{size}"})
                f.seek(a)
                return self.answer(206, f.read(b - a + 1), "application/octet-stream",
                                   {"Content-Range": f"bytes {a}-{b}/{size}"})
        self.answer(404, b'{"error":"not found"}')


srv = ThreadingHTTPServer(("127.0.0.1", 0), Hub)
with open(PORTFILE + ".new", "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(PORTFILE + ".new", PORTFILE)
srv.serve_forever()
