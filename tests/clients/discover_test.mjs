// discover_test: the official npm `ollama` client against vram serve's
// discovered models (tests/cli/discover.sh). Each argument is a step, its
// result one JSON line on stdout for the shell to check:
//   list               {"list": [names]}
//   chat:NAME[@CTX]    {"chat": NAME, "content": ...}; with CTX as
//                      options.num_ctx
// PROXY is the proxy's URL.
import { Ollama } from 'ollama';

const ollama = new Ollama({ host: process.env.PROXY });
for (const step of process.argv.slice(2)) {
  if (step === 'list') {
    const r = await ollama.list();
    console.log(JSON.stringify({ list: r.models.map((m) => m.name) }));
    continue;
  }
  const m = /^chat:(.+?)(?:@(\d+))?$/.exec(step);
  if (!m) throw new Error(`unknown step ${step}`);
  const req = { model: m[1], messages: [{ role: 'user', content: 'hello' }] };
  if (m[2]) req.options = { num_ctx: Number(m[2]) };
  try {
    const r = await ollama.chat(req);
    console.log(JSON.stringify({ chat: m[1], content: r.message.content }));
  } catch (e) {
    console.log(JSON.stringify({ chat: m[1], error: String(e.message || e) }));
  }
}
