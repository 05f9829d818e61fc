"""Requests for bench/gpu_discover.sh: time to first token, and the answer.

  discover_bench.py proxy URL ROUNDS NAME...
      through vram serve's proxy: each model once (cold starts), then ROUNDS
      rounds of all of them in turn, each request finding its model
      suspended (the budget holds one): the switch is fast swap's.
  discover_bench.py reload SERVER PORT ROUNDS NAME=FILE:CTX:NGL...
      Ollama's way on the same files: each request stops the llama-server
      running (SIGTERM, waited for) and starts the one for its model with the
      same -c and -ngl, waits for /health, then asks; its time to first token
      counts from the stop.

Each request is a chat with greedy sampling and a fixed seed (temperature 0,
top_k 1, seed 42, 16 tokens), streamed; one JSON line per request on stdout:
{phase, model, round, ttft_s, total_s, content}. Stdlib only."""
import http.client
import json
import os
import signal
import subprocess
import sys
import time
import urllib.parse

BODY = {"messages": [{"role": "user", "content": "Say hello."}], "max_tokens": 16,
        "temperature": 0, "top_k": 1, "seed": 42, "stream": True}


def chat(url, model, t0=None):
    """POST a streamed chat; (seconds to the first content, to the end, content)."""
    u = urllib.parse.urlsplit(url)
    t0 = time.monotonic() if t0 is None else t0
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=600)
    c.request("POST", "/v1/chat/completions", json.dumps(dict(BODY, model=model)),
              {"Content-Type": "application/json"})
    r = c.getresponse()
    if r.status != 200:
        raise RuntimeError(f"{model}: HTTP {r.status}: {r.read()[:300]!r}")
    first, text = None, []
    for line in r:
        line = line.strip()
        if not line.startswith(b"data: ") or line == b"data: [DONE]":
            continue
        for ch in json.loads(line[6:]).get("choices", []):
            piece = (ch.get("delta") or {}).get("content") or ch.get("text") or ""
            if piece and first is None:
                first = time.monotonic() - t0
            text.append(piece)
    c.close()
    total = time.monotonic() - t0
    return (first if first is not None else total), total, "".join(text)


def emit(**kw):
    print(json.dumps(kw), flush=True)


def proxy(url, rounds, names):
    for n in names:
        ttft, total, text = chat(url, n)
        emit(phase="cold", model=n, round=0, ttft_s=ttft, total_s=total, content=text)
    for k in range(1, rounds + 1):
        for n in names:
            ttft, total, text = chat(url, n)
            emit(phase="swap", model=n, round=k, ttft_s=ttft, total_s=total, content=text)


def healthy(port, deadline):
    while time.monotonic() < deadline:
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            c.request("GET", "/health")
            ok = c.getresponse().status == 200
            c.close()
            if ok:
                return True
        except OSError:
            pass
        time.sleep(0.02)
    return False


def reload(server, port, rounds, specs):
    models = []
    for s in specs:
        name, rest = s.split("=", 1)
        path, ctx, ngl = rest.rsplit(":", 2)
        models.append((name, path, ctx, ngl))
    cur = None
    log = open(os.environ.get("RELOAD_LOG", os.devnull), "ab")
    try:
        for k in range(0, rounds + 1):
            for name, path, ctx, ngl in models:
                t0 = time.monotonic()
                if cur:  # Ollama unloads the model running, then loads the next
                    cur.send_signal(signal.SIGTERM)
                    cur.wait(60)
                env = dict(os.environ, PORT=str(port))
                cur = subprocess.Popen([server, "-m", path, "--host", "127.0.0.1", "--port",
                                        str(port), "-c", ctx, "-ngl", ngl, "--alias", name],
                                       stdout=log, stderr=log, env=env)
                if not healthy(port, time.monotonic() + 300):
                    raise RuntimeError(f"{name}: llama-server did not answer /health")
                ttft, total, text = chat(f"http://127.0.0.1:{port}", name, t0)
                emit(phase="reload" if k else "reload-first", model=name, round=k, ttft_s=ttft,
                     total_s=total, content=text)
    finally:
        if cur:
            cur.send_signal(signal.SIGTERM)
            cur.wait(60)


if __name__ == "__main__":
    if sys.argv[1] == "proxy":
        proxy(sys.argv[2], int(sys.argv[3]), sys.argv[4:])
    elif sys.argv[1] == "reload":
        reload(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5:])
    else:
        sys.exit(__doc__)
