// llama_server: a small OpenAI-compatible server on llama.cpp, through
// node-llama-cpp's prebuilt CPU build from npm (node-llama-cpp has no
// server of its own). For tests/cli/clients.sh, behind vram serve's proxy:
// a real model answering, not a stub. Routes: GET /health (200 once the
// model is loaded), GET /v1/models, POST /v1/chat/completions and
// /v1/completions (streamed as server-sent events or not, with usage and
// finish_reason as llama-server gives them), POST /v1/embeddings. One
// request runs at a time (one context sequence); others wait their turn.
// usage: PORT=N node llama_server.mjs MODEL.gguf
import http from 'node:http';
import { getLlama, LlamaCompletion, LlamaLogLevel } from 'node-llama-cpp';

const file = process.argv[2];
const llama = await getLlama({ gpu: false, build: 'never', logLevel: LlamaLogLevel.error });
const model = await llama.loadModel({ modelPath: file });
const context = await model.createContext({ contextSize: 512 });
const completion = new LlamaCompletion({ contextSequence: context.getSequence() });
let embedder = null;
let turn = Promise.resolve();

// a chat as one prompt: the tiny model has no chat template
function promptOf(body, chat) {
  if (!chat) return Array.isArray(body.prompt) ? body.prompt.join('') : String(body.prompt ?? '');
  const text = (c) => (typeof c === 'string' ? c : (c || []).map((p) => p.text || '').join(''));
  return (body.messages || []).map((m) => `${m.role}: ${text(m.content)}\n`).join('') + 'assistant:';
}

function send(res, status, obj) {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(obj));
}

async function generate(req, res, body, chat) {
  const prompt = promptOf(body, chat);
  const maxTokens = body.max_completion_tokens ?? body.max_tokens ?? 16;
  if (!Number.isInteger(maxTokens) || maxTokens < 1)
    return send(res, 400, { error: { message: 'max_tokens: a positive integer', type: 'invalid_request_error' } });
  const promptTokens = model.tokenize(prompt).length;
  const created = Math.floor(Date.now() / 1000);
  const id = `llama-${created}`;
  const object = chat ? 'chat.completion.chunk' : 'text_completion';
  const choice = (text, finish) => (chat
    ? { index: 0, delta: text === null ? {} : { content: text }, finish_reason: finish }
    : { index: 0, text: text ?? '', finish_reason: finish });
  let completionTokens = 0;
  const stream = body.stream === true;
  const abort = new AbortController();
  res.on('close', () => abort.abort());
  if (stream) {
    res.writeHead(200, { 'Content-Type': 'text/event-stream' });
    if (chat) res.write(`data: ${JSON.stringify({ id, object, created, model: body.model, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] })}\n\n`);
  }
  const out = await completion.generateCompletionWithMeta(prompt, {
    maxTokens,
    temperature: body.temperature ?? 0,
    seed: body.seed ?? 1,
    signal: abort.signal,
    stopOnAbortSignal: true,
    onToken: (t) => { completionTokens += t.length; },
    onTextChunk: (t) => {
      if (stream && t) res.write(`data: ${JSON.stringify({ id, object, created, model: body.model, choices: [choice(t, null)] })}\n\n`);
    },
  });
  const finish = out.metadata.stopReason === 'maxTokens' ? 'length' : 'stop';
  const usage = { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens };
  if (!stream) {
    const c = chat
      ? { index: 0, message: { role: 'assistant', content: out.response }, finish_reason: finish }
      : { index: 0, text: out.response, finish_reason: finish };
    return send(res, 200, { id, object: chat ? 'chat.completion' : 'text_completion', created, model: body.model, choices: [c], usage });
  }
  res.write(`data: ${JSON.stringify({ id, object, created, model: body.model, choices: [choice(null, finish)] })}\n\n`);
  if (body.stream_options && body.stream_options.include_usage)
    res.write(`data: ${JSON.stringify({ id, object, created, model: body.model, choices: [], usage })}\n\n`);
  res.end('data: [DONE]\n\n');
}

async function embed(res, body) {
  embedder ??= await model.createEmbeddingContext({ contextSize: 256 });
  const input = Array.isArray(body.input) ? body.input : [body.input];
  const data = [];
  let tokens = 0;
  for (const [i, s] of input.entries()) {
    tokens += model.tokenize(String(s)).length;
    data.push({ object: 'embedding', index: i, embedding: Array.from((await embedder.getEmbeddingFor(String(s))).vector) });
  }
  send(res, 200, { object: 'list', model: body.model, data, usage: { prompt_tokens: tokens, total_tokens: tokens } });
}

http.createServer((req, res) => {
  let data = '';
  req.on('data', (c) => { data += c; });
  req.on('end', () => {
    if (req.url === '/health') return send(res, 200, { status: 'ok' });
    if (req.url === '/v1/models') return send(res, 200, { object: 'list', data: [{ id: 'tiny', object: 'model' }] });
    let body;
    try { body = JSON.parse(data || '{}'); } catch { return send(res, 400, { error: { message: 'the body is not JSON', type: 'invalid_request_error' } }); }
    const run = req.url === '/v1/chat/completions' ? () => generate(req, res, body, true)
      : req.url === '/v1/completions' ? () => generate(req, res, body, false)
        : req.url === '/v1/embeddings' ? () => embed(res, body) : null;
    if (!run) return send(res, 404, { error: { message: `${req.url}: no such route`, type: 'not_found_error' } });
    turn = turn.then(run).catch((e) => {
      if (!res.headersSent) send(res, 500, { error: { message: String(e && e.message || e), type: 'server_error' } });
      else res.destroy();
    });
  });
}).listen(Number(process.env.PORT), '127.0.0.1');
console.error(`llama_server: ${file} on port ${process.env.PORT}`);
