// stub: a model server that speaks one API only, for tests/cli/clients.sh:
// `node stub.mjs openai` answers /v1/... as llama-server does (and 404 on
// /api/...), `node stub.mjs ollama` answers /api/... as Ollama does (and
// 404 on /v1/...). Its answers are fixed words ("Hello from the openai
// stub."), streamed with each JSON object cut in two writes, so that the
// proxy's translation must join events split across reads. A message
// "fail" gets a 400 with the backend's own error; "call a tool" a tool
// call. GET /last is the last request's body, as the backend got it, and
// GET /last/headers its headers.
// PORT comes from the environment (vram serve sets it).
import http from 'node:http';

const API = process.argv[2];
const WORDS = ['Hello', ' from', ' the', ` ${API}`, ' stub.'];
let last = null;
let lastHeaders = null;

const later = (ms) => new Promise((r) => setTimeout(r, ms));
// each object in two writes, the cut inside the JSON
async function split(res, text) {
  const cut = Math.max(1, Math.floor(text.length / 2));
  res.write(text.slice(0, cut));
  await later(5);
  res.write(text.slice(cut));
  await later(5);
}

function lastText(body) {
  const msgs = body.messages || [];
  const m = msgs[msgs.length - 1];
  if (!m) return body.prompt || '';
  return typeof m.content === 'string' ? m.content : (m.content || []).map((p) => p.text || '').join('');
}

function json(res, status, obj) {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(obj));
}

async function openai(req, res, body) {
  const created = Math.floor(Date.now() / 1000);
  const text = lastText(body);
  if (text === 'fail')
    return json(res, 400, { error: { message: 'the stub refuses: fail', type: 'invalid_request_error', code: 400 } });
  if (req.url === '/v1/embeddings') {
    const input = Array.isArray(body.input) ? body.input : [body.input];
    return json(res, 200, {
      object: 'list', model: body.model,
      data: input.map((s, i) => ({ object: 'embedding', index: i, embedding: [s.length, 0.5, -0.25] })),
      usage: { prompt_tokens: input.length * 2, total_tokens: input.length * 2 },
    });
  }
  const chat = req.url === '/v1/chat/completions';
  if (!chat && req.url !== '/v1/completions') return json(res, 404, { error: { message: 'no such route' } });
  const tool = chat && text === 'call a tool' && body.tools;
  const usage = { prompt_tokens: 7, completion_tokens: WORDS.length, total_tokens: 7 + WORDS.length };
  const finish = tool ? 'tool_calls' : (body.max_tokens === 2 ? 'length' : 'stop');
  const words = body.max_tokens === 2 ? WORDS.slice(0, 2) : WORDS;
  if (!body.stream) {
    const message = tool
      ? { role: 'assistant', content: null, tool_calls: [{ id: 'call_x', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] }
      : { role: 'assistant', content: words.join('') };
    return json(res, 200, {
      id: 'x', object: chat ? 'chat.completion' : 'text_completion', created, model: body.model,
      choices: [chat ? { index: 0, message, finish_reason: finish } : { index: 0, text: words.join(''), finish_reason: finish }],
      usage,
    });
  }
  res.writeHead(200, { 'Content-Type': 'text/event-stream' });
  const chunk = (delta, fin) => ({
    id: 'x', object: chat ? 'chat.completion.chunk' : 'text_completion', created, model: body.model,
    choices: [chat ? { index: 0, delta, finish_reason: fin } : { index: 0, text: delta.content || '', finish_reason: fin }],
  });
  if (chat) await split(res, `data: ${JSON.stringify(chunk({ role: 'assistant', content: '' }, null))}\n\n`);
  if (tool) {
    const pieces = ['{"ci', 'ty":"Par', 'is"}'];
    await split(res, `data: ${JSON.stringify(chunk({ tool_calls: [{ index: 0, id: 'call_x', type: 'function', function: { name: 'get_weather', arguments: '' } }] }, null))}\n\n`);
    for (const p of pieces)
      await split(res, `data: ${JSON.stringify(chunk({ tool_calls: [{ index: 0, function: { arguments: p } }] }, null))}\n\n`);
  } else {
    for (const w of words) await split(res, `data: ${JSON.stringify(chunk({ content: w }, null))}\r\n\r\n`);
  }
  await split(res, `data: ${JSON.stringify(chunk({}, finish))}\n\n`);
  if (body.stream_options && body.stream_options.include_usage)
    await split(res, `data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', created, model: body.model, choices: [], usage })}\n\n`);
  res.end('data: [DONE]\n\n');
}

async function ollama(req, res, body) {
  const now = () => new Date().toISOString();
  const text = lastText(body);
  if (text === 'fail') return json(res, 400, { error: 'the stub refuses: fail' });
  if (req.url === '/api/embed') {
    const input = Array.isArray(body.input) ? body.input : [body.input];
    return json(res, 200, { model: body.model, embeddings: input.map((s) => [s.length, 0.5, -0.25]), prompt_eval_count: input.length * 2 });
  }
  const chat = req.url === '/api/chat';
  if (!chat && req.url !== '/api/generate') return json(res, 404, { error: 'no such route' });
  const limit = body.options && body.options.num_predict === 2;
  const words = limit ? WORDS.slice(0, 2) : WORDS;
  const tool = chat && text === 'call a tool' && body.tools;
  const fin = {
    done: true, done_reason: limit ? 'length' : 'stop', total_duration: 1000, prompt_eval_count: 7,
    prompt_eval_duration: 100, eval_count: words.length, eval_duration: 200,
  };
  const part = (t) => (chat ? { message: { role: 'assistant', content: t } } : { response: t });
  if (body.stream === false) {
    const m = tool ? { message: { role: 'assistant', content: '', tool_calls: [{ function: { name: 'get_weather', arguments: { city: 'Paris' } } }] } } : part(words.join(''));
    return json(res, 200, { model: body.model, created_at: now(), ...m, ...fin });
  }
  res.writeHead(200, { 'Content-Type': 'application/x-ndjson' });
  if (tool)
    await split(res, JSON.stringify({ model: body.model, created_at: now(), message: { role: 'assistant', content: '', tool_calls: [{ function: { name: 'get_weather', arguments: { city: 'Paris' } } }] }, done: false }) + '\n');
  else
    for (const w of words) await split(res, JSON.stringify({ model: body.model, created_at: now(), ...part(w), done: false }) + '\n');
  res.end(JSON.stringify({ model: body.model, created_at: now(), ...part(''), ...fin }) + '\n');
}

http.createServer((req, res) => {
  let data = '';
  req.on('data', (c) => { data += c; });
  req.on('end', async () => {
    if (req.url === '/health' || (req.method === 'GET' && req.url === '/')) return json(res, 200, { ok: true });
    if (req.url === '/last') return json(res, 200, last || {});
    if (req.url === '/last/headers') return json(res, 200, lastHeaders || {});
    let body = {};
    try { body = data ? JSON.parse(data) : {}; } catch { return json(res, 400, { error: 'not JSON' }); }
    const mine = API === 'openai' ? req.url.startsWith('/v1/') : req.url.startsWith('/api/');
    if (!mine) return json(res, 404, API === 'openai' ? { error: { message: `${req.url}: not here (OpenAI's API only)` } } : { error: `${req.url}: not here (Ollama's API only)` });
    last = body;
    lastHeaders = req.headers;
    (API === 'openai' ? openai : ollama)(req, res, body).catch(() => res.destroy());
  });
}).listen(Number(process.env.PORT), '127.0.0.1');
