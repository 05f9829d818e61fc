#!/usr/bin/env python3
"""trace_client: replays a seeded trace of streamed OpenAI chat requests
through vram serve's proxy and measures what a user waits for.

Arrivals are open-loop (a Poisson process: a request leaves at its time
whether or not the previous ones are answered), models are drawn from a
Zipf law over the names given, so a few models are hot and the rest
come back now and then, each time from wherever the policy put them.
One JSON line per request on stdout (model, start, time to first token,
total, tokens, status); a summary on stderr.

With --long N, each model first gets one long generation of N tokens
(started a second apart), and the trace's requests are short ones: how
long a short request waits behind long ones is what time slices change.

  trace_client.py --url http://127.0.0.1:11500 --models m1,m2,m3 \\
      --requests 40 --rate 1 --seed 42 [--tokens 16] [--zipf 1.1]
"""
import argparse, faulthandler, http.client, json, random, signal, statistics, sys, threading, time
import urllib.parse

faulthandler.register(signal.SIGUSR2)  # every thread's stack, for a stuck trace


def trace(models, n, rate, seed, s):
    rnd = random.Random(seed)
    w = [1 / (k + 1) ** s for k in range(len(models))]
    t = 0.0
    for _ in range(n):
        t += rnd.expovariate(rate)
        yield t, rnd.choices(models, weights=w)[0]


def one(url, model, tokens, out, i, kind="short"):
    u = urllib.parse.urlparse(url)
    body = json.dumps({"model": model, "stream": True, "max_tokens": tokens,
                       "messages": [{"role": "user", "content": "hello"}]})
    t0 = time.monotonic()
    ttft = None
    status = 0
    ntok = 0
    try:
        c = http.client.HTTPConnection(u.hostname, u.port, timeout=600)
        c.request("POST", "/v1/chat/completions", body, {"Content-Type": "application/json"})
        r = c.getresponse()
        status = r.status
        while True:
            line = r.readline()
            if not line:
                break
            if line.startswith(b"data:") and b"[DONE]" not in line:
                ntok += 1
                if ttft is None:
                    ttft = time.monotonic() - t0
        c.close()
    except Exception as e:  # a failed request is a result too
        print(f"request {i} ({model}): {e}", file=sys.stderr)
    out[i] = {"i": i, "kind": kind, "model": model, "status": status, "ttft_s": ttft,
              "total_s": time.monotonic() - t0, "tokens": ntok}


def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(round(p / 100 * (len(v) - 1))))] if v else float("nan")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True)
    ap.add_argument("--models", required=True)
    ap.add_argument("--requests", type=int, default=40)
    ap.add_argument("--rate", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--tokens", type=int, default=16)
    ap.add_argument("--zipf", type=float, default=1.1)
    ap.add_argument("--long", type=int, default=0, help="a long generation of N tokens per model first")
    a = ap.parse_args()
    models = a.models.split(",")
    nlong = len(models) if a.long else 0
    out = [None] * (a.requests + nlong)
    threads = []
    start = time.monotonic()
    for k, m in enumerate(models[:nlong]):
        th = threading.Thread(target=one, args=(a.url, m, a.long, out, a.requests + k, "long"))
        th.start()
        threads.append(th)
        time.sleep(1)
    for i, (at, m) in enumerate(trace(models, a.requests, a.rate, a.seed, a.zipf)):
        delay = start + at - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        th = threading.Thread(target=one, args=(a.url, m, a.tokens, out, i))
        th.start()
        threads.append(th)
    for th in threads:
        th.join()
    wall = time.monotonic() - start
    for r in out:
        print(json.dumps(r))
    ok = [r for r in out if r and r["status"] == 200 and r["ttft_s"] is not None]
    t = [r["ttft_s"] for r in ok if r["kind"] == "short"]
    print(f"requests {len(out)} ok {len(ok)} ttft p50 {pct(t, 50):.3f} s p99 {pct(t, 99):.3f} s "
          f"max {max(t) if t else float('nan'):.3f} s wall {wall:.1f} s", file=sys.stderr)
    longs = [r for r in ok if r["kind"] == "long"]
    if longs:
        span = max(r["total_s"] for r in longs)
        print(f"long generations: {sum(r['tokens'] for r in longs)} tokens in {span:.1f} s, "
              f"{sum(r['tokens'] for r in longs) / span:.1f} tokens/s", file=sys.stderr)


if __name__ == "__main__":
    main()
