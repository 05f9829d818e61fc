// clients_test: the official npm clients, `openai` (v5) and `ollama`,
// against vram serve's proxy, as Open WebUI, Continue or LangChain use
// them. Started by tests/cli/clients.sh, which runs the daemon on the
// simulated driver with these models and gives their address in PROXY:
//   oai   tests/clients/stub.mjs openai: speaks OpenAI's API only
//         (aliases gpt-4o, oai-alias:v1, and a Hugging Face id and an
//         Ollama namespace/model:tag: org/Oai-7B-Instruct, library/oai:7b)
//   oll   tests/clients/stub.mjs ollama: speaks Ollama's API only (api = ollama),
//         knows itself as library/oll-up:7b (upstream_name)
//   tiny  tests/clients/llama_server.mjs: llama.cpp (node-llama-cpp) serving
//         a tiny GGUF with random weights (TINY_GGUF), OpenAI's API only
// Prints "ok - ..." / "not ok - ..." per check and "N passed, N failed".
import OpenAI from 'openai';
import { Ollama } from 'ollama';
import { statSync } from 'node:fs';

const URL = process.env.PROXY;
const openai = new OpenAI({ baseURL: `${URL}/v1`, apiKey: 'none', maxRetries: 0, timeout: 60000 });
const ollama = new Ollama({ host: URL });
let pass = 0, fail = 0;

function ok(name) { pass++; console.log('ok - ' + name); }
function notOk(name, ...why) { fail++; console.log('not ok - ' + name); for (const w of why) console.log('#   ' + w); }
function expectEq(name, got, want) {
  const g = JSON.stringify(got), w = JSON.stringify(want);
  if (g === w) ok(name); else notOk(name, `got:  ${g}`, `want: ${w}`);
}
function expect(name, cond, ...why) { if (cond) ok(name); else notOk(name, ...why); }
async function check(name, fn) {
  try { await fn(); } catch (e) { notOk(name, `threw: ${e && e.stack || e}`); }
}
async function thrown(fn) { try { await fn(); return null; } catch (e) { return e; } }
const last = async (m) => (await fetch(`${URL}/m/${m}/last`)).json();
const user = (content) => [{ role: 'user', content }];
const OAI_TEXT = 'Hello from the openai stub.';
const OLL_TEXT = 'Hello from the ollama stub.';
const tools = [{ type: 'function', function: { name: 'get_weather', description: 'the weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];

// ---- the OpenAI client ----
await check('openai: a chat, not streamed, to an OpenAI backend', async () => {
  const r = await openai.chat.completions.create({ model: 'oai', messages: user('hi') });
  expectEq('openai: a chat, not streamed, to an OpenAI backend', r.choices[0].message.content, OAI_TEXT);
});
await check('openai: a chat, streamed, to an OpenAI backend', async () => {
  let text = '';
  for await (const c of await openai.chat.completions.create({ model: 'oai', messages: user('hi'), stream: true }))
    text += c.choices[0]?.delta?.content || '';
  expectEq('openai: a chat, streamed, to an OpenAI backend', text, OAI_TEXT);
});
await check('openai: a streamed chat to an Ollama-only backend', async () => {
  let text = '', usage = null, finish = null;
  const s = await openai.chat.completions.create({ model: 'oll', messages: user('hi'), stream: true, stream_options: { include_usage: true } });
  for await (const c of s) {
    text += c.choices[0]?.delta?.content || '';
    finish = c.choices[0]?.finish_reason || finish;
    if (c.usage) usage = c.usage;
  }
  expectEq('openai: a streamed chat to an Ollama-only backend, translated', text, OLL_TEXT);
  expectEq('openai: ... its finish_reason and usage from Ollama\'s counts', [finish, usage && usage.prompt_tokens, usage && usage.completion_tokens], ['stop', 7, 5]);
  const got = await last('oll');
  expectEq('openai: ... the backend got Ollama\'s /api/chat', [got.stream, got.messages], [true, [{ role: 'user', content: 'hi' }]]);
});
await check('openai: a chat, not streamed, to an Ollama-only backend', async () => {
  const r = await openai.chat.completions.create({ model: 'oll', messages: user('hi'), max_tokens: 2 });
  expectEq('openai: a chat, not streamed, to an Ollama-only backend (max_tokens as num_predict)',
    [r.choices[0].message.content, r.choices[0].finish_reason, r.usage.completion_tokens], ['Hello from', 'length', 2]);
  expectEq('openai: ... max_tokens reached Ollama as options.num_predict', (await last('oll')).options, { num_predict: 2 });
});
await check('openai: tool calls from an Ollama-only backend', async () => {
  const r = await openai.chat.completions.create({ model: 'oll', messages: user('call a tool'), tools });
  const c = r.choices[0];
  expectEq('openai: tool calls from an Ollama-only backend', [c.finish_reason, c.message.tool_calls[0].function.name, JSON.parse(c.message.tool_calls[0].function.arguments)],
    ['tool_calls', 'get_weather', { city: 'Paris' }]);
});
await check('openai: errors', async () => {
  let e = await thrown(() => openai.chat.completions.create({ model: 'oai', messages: user('fail') }));
  expectEq('openai: a backend\'s error reaches the client as it said it', [e && e.status, e && e.error && e.error.message], [400, 'the stub refuses: fail']);
  e = await thrown(() => openai.chat.completions.create({ model: 'oll', messages: user('fail') }));
  expectEq('openai: an Ollama backend\'s error, in OpenAI\'s form', [e && e.status, e && e.error && e.error.message, e && e.error && e.error.type], [400, 'the stub refuses: fail', 'invalid_request_error']);
  e = await thrown(() => openai.chat.completions.create({ model: 'gpt-9', messages: user('hi') }));
  expectEq('openai: an unknown model: 404', e && e.status, 404);
});
await check('openai: aliases', async () => {
  const r = await openai.chat.completions.create({ model: 'gpt-4o', messages: user('hi') });
  expectEq('openai: an alias reaches its model', r.choices[0].message.content, OAI_TEXT);
  expectEq('openai: ... and the backend sees the model\'s own name', (await last('oai')).model, 'oai');
});
await check('upstream_name: the name the backend knows', async () => {
  const r = await openai.chat.completions.create({ model: 'oll', messages: user('hi') });
  expectEq('openai: a chat to oll', r.choices[0].message.content, OLL_TEXT);
  expectEq('openai: ... its backend got its upstream_name, library/oll-up:7b', (await last('oll')).model, 'library/oll-up:7b');
  expectEq('openai: ... the client reads the name it sent', r.model, 'oll');
  const o = await ollama.chat({ model: 'oll', messages: user('hi'), stream: false });
  expectEq('ollama: a chat to oll passes through, its backend told library/oll-up:7b',
    [o.message.content, (await last('oll')).model], [OLL_TEXT, 'library/oll-up:7b']);
});
await check('openai: names with / and :', async () => {
  for (const name of ['org/Oai-7B-Instruct', 'library/oai:7b']) {
    const r = await openai.chat.completions.create({ model: name, messages: user('hi') });
    expectEq(`openai: ${name} reaches its model`, r.choices[0].message.content, OAI_TEXT);
    const m = await openai.models.retrieve(name);
    expectEq(`openai: models.retrieve('${name}'): its model`, m.id, 'oai');
  }
});
await check('openai: the model list', async () => {
  const list = [];
  for await (const m of openai.models.list()) list.push(m);
  expectEq('openai: models.list(): every model', list.map((m) => m.id), ['oai', 'oll', 'tiny']);
  expectEq('openai: ... each with its state (oai answered: ready)', list.find((m) => m.id === 'oai').state, 'ready');
});
await check('openai: embeddings from an Ollama-only backend', async () => {
  // the SDK asks for base64 unless told otherwise, and decodes it
  const r = await openai.embeddings.create({ model: 'oll', input: 'abcd' });
  expectEq('openai: embeddings (base64) from an Ollama-only backend', r.data[0].embedding, [4, 0.5, -0.25]);
});

// ---- the Ollama client ----
await check('ollama: version and /', async () => {
  expect('ollama: version()', /^\d+\.\d+\.\d+$/.test((await ollama.version()).version));
  expectEq('ollama: GET / says Ollama is running', await (await fetch(URL + '/')).text(), 'Ollama is running');
});
await check('ollama: a chat, not streamed, to an OpenAI-only backend', async () => {
  const r = await ollama.chat({ model: 'oai', messages: user('hi'), stream: false });
  expectEq('ollama: a chat, not streamed, to an OpenAI-only backend',
    [r.message.role, r.message.content, r.done, r.done_reason, r.prompt_eval_count, r.eval_count], ['assistant', OAI_TEXT, true, 'stop', 7, 5]);
  expect('ollama: ... with its durations', r.total_duration > 0 && r.total_duration >= r.load_duration, JSON.stringify(r));
});
await check('ollama: a chat, streamed, to an OpenAI-only backend', async () => {
  const parts = [];
  for await (const p of await ollama.chat({ model: 'oai', messages: user('hi'), stream: true, options: { temperature: 0.5, num_predict: 50 } })) parts.push(p);
  const end = parts[parts.length - 1];
  expectEq('ollama: a streamed chat to an OpenAI-only backend, in parts', parts.map((p) => p.message.content).join(''), OAI_TEXT);
  expect('ollama: ... more than one part before the last', parts.length > 2, `${parts.length} parts`);
  expectEq('ollama: ... the last says done, why, and the token counts from usage', [end.done, end.done_reason, end.prompt_eval_count, end.eval_count], [true, 'stop', 7, 5]);
  const got = await last('oai');
  expectEq('ollama: ... the backend got OpenAI\'s request, asking for the usage',
    [got.stream, got.stream_options, got.temperature, got.max_tokens], [true, { include_usage: true }, 0.5, 50]);
});
await check('ollama: tool calls from an OpenAI-only backend', async () => {
  const parts = [];
  for await (const p of await ollama.chat({ model: 'oai', messages: user('call a tool'), tools, stream: true })) parts.push(p);
  const calls = parts.flatMap((p) => p.message.tool_calls || []);
  expectEq('ollama: tool calls streamed in pieces arrive whole, arguments an object', calls, [{ function: { name: 'get_weather', arguments: { city: 'Paris' } } }]);
});
await check('ollama: generate and embed to an OpenAI-only backend', async () => {
  const g = await ollama.generate({ model: 'oai', prompt: 'hi', system: 'be brief', stream: false });
  expectEq('ollama: generate() to an OpenAI-only backend', [g.response, g.done_reason], [OAI_TEXT, 'stop']);
  expectEq('ollama: ... as a chat of its system and prompt', (await last('oai')).messages, [{ role: 'system', content: 'be brief' }, { role: 'user', content: 'hi' }]);
  const e = await ollama.embed({ model: 'oai', input: ['ab', 'cde'] });
  expectEq('ollama: embed() to an OpenAI-only backend', [e.embeddings, e.prompt_eval_count], [[[2, 0.5, -0.25], [3, 0.5, -0.25]], 4]);
});
await check('ollama: a chat to an Ollama backend passes through', async () => {
  const r = await ollama.chat({ model: 'oll', messages: user('hi'), stream: false });
  expectEq('ollama: a chat to an Ollama backend passes through', r.message.content, OLL_TEXT);
});
await check('ollama: errors', async () => {
  let e = await thrown(() => ollama.chat({ model: 'oai', messages: user('fail'), stream: false }));
  expectEq('ollama: a backend\'s error: its text is the message', [e && e.name, e && e.message, e && e.status_code], ['ResponseError', 'the stub refuses: fail', 400]);
  e = await thrown(async () => { for await (const _ of await ollama.chat({ model: 'oai', messages: user('fail'), stream: true })); });
  expectEq('ollama: ... streamed too', e && e.message, 'the stub refuses: fail');
  e = await thrown(() => ollama.chat({ model: 'nope', messages: user('hi') }));
  expect('ollama: an unknown model: its message is the text', e && e.status_code === 404 && /no model 'nope'/.test(e.message), `${e && e.message}`);
});
await check('ollama: aliases and :latest', async () => {
  for (const name of ['oai:latest', 'gpt-4o', 'gpt-4o:latest', 'oai-alias:v1']) {
    const r = await ollama.chat({ model: name, messages: user('hi'), stream: false });
    expectEq(`ollama: ${name} reaches oai`, r.message.content, OAI_TEXT);
  }
  const e = await thrown(() => ollama.chat({ model: 'oai:7b', messages: user('hi'), stream: false }));
  expectEq('ollama: another tag is another model (404)', e && e.status_code, 404);
});
await check('ollama: names with / and :', async () => {
  for (const name of ['org/Oai-7B-Instruct', 'library/oai:7b']) {
    const r = await ollama.chat({ model: name, messages: user('hi'), stream: false });
    expectEq(`ollama: ${name} reaches oai`, r.message.content, OAI_TEXT);
  }
  const s = await ollama.show({ model: 'library/oai:7b' });
  expect('ollama: show() of library/oai:7b', typeof s.modelfile === 'string' && /FROM/.test(s.modelfile), JSON.stringify(s));
});
await check('ollama: list()', async () => {
  const l = await ollama.list();
  expectEq('ollama: list(): every model', l.models.map((m) => m.name), ['oai', 'oll', 'tiny']);
  const t = l.models.find((m) => m.name === 'tiny');
  expectEq('ollama: ... a model\'s details from its GGUF', [t.size, t.details.format, t.details.family, t.details.quantization_level],
    [statSync(process.env.TINY_GGUF).size, 'gguf', 'llama', 'F16']);
  expect('ollama: ... and its file\'s time', Math.abs(new Date(t.modified_at) - statSync(process.env.TINY_GGUF).mtimeMs) < 2000, t.modified_at);
  // no file =: found by a name in a local store, as vram fit finds models
  const a = l.models.find((m) => m.name === 'oai'), o = l.models.find((m) => m.name === 'oll');
  expectEq('ollama: ... oai\'s details from the Hugging Face cache (its alias org/Oai-7B-Instruct)',
    [a.details.format, a.details.family, a.details.parameter_size, a.details.quantization_level], ['safetensors', 'llama', '33.6M', 'BF16']);
  expectEq('ollama: ... oll\'s from Ollama\'s store (its upstream_name library/oll-up:7b)',
    [o.details.format, o.details.family, o.details.quantization_level], ['gguf', 'llama', 'Q4_K_M']);
});
await check('ollama: show()', async () => {
  const s = await ollama.show({ model: 'tiny:latest' });
  expectEq('ollama: show(): the context length and shape from the GGUF',
    [s.model_info['general.architecture'], s.model_info['llama.context_length'], s.model_info['llama.block_count']], ['llama', 2048, 2]);
  const e = await thrown(() => ollama.show({ model: 'nope' }));
  expectEq('ollama: show() of an unknown model: 404', e && e.status_code, 404);
  const a = await ollama.show({ model: 'gpt-4o' });
  expectEq('ollama: show() of a model found by name: its details and shape',
    [a.details.family, a.details.format, a.model_info['general.architecture'], a.model_info['llama.block_count']], ['llama', 'safetensors', 'llama', 2]);
});
await check('ollama: ps()', async () => {
  const p = await ollama.ps();
  const m = p.models.find((x) => x.name === 'oai');
  expect('ollama: ps(): a model that answered is resident', !!m, JSON.stringify(p));
  expectEq('ollama: ... its size, all of it in VRAM', [m && m.size, m && m.size_vram], [1073741824, 1073741824]);
  const left = m ? new Date(m.expires_at) - Date.now() : 0;
  expect('ollama: ... expires_at its keep_alive (5m) from its last answer', left > 200000 && left <= 300000, m && m.expires_at);
  expect('ollama: ... a model not running is not listed', !p.models.find((x) => x.name === 'tiny'), JSON.stringify(p.models.map((x) => x.name)));
});

await check('ollama: pull, push, create, copy, delete', async () => {
  const cases = [
    ['pull', () => ollama.pull({ model: 'llama3.1:8b' }), /does not download models.*ollama pull NAME.*vram fit NAME/],
    ['pull, streamed', () => ollama.pull({ model: 'llama3.1:8b', stream: true }), /does not download models/],
    ['push', () => ollama.push({ model: 'oai' }), /uploads no models.*ollama push/],
    ['create', () => ollama.create({ model: 'mine', from: 'oai' }), /makes no models.*\[model NAME\] section/],
    ['copy', () => ollama.copy({ source: 'oai', destination: 'oai2' }), /copies no models.*aliases = NAME/],
    ['delete', () => ollama.delete({ model: 'oai' }), /deletes no models.*ollama rm NAME/],
  ];
  for (const [what, fn, text] of cases) {
    const e = await thrown(fn);
    expect(`ollama: ${what}(): 501, saying it is not done here and what to do instead`,
      e && e.status_code === 501 && text.test(e.error), e ? `${e.status_code} ${e.error}` : 'no error');
  }
});

// ---- a real llama.cpp behind the proxy ----
await check('real backend: the OpenAI route', async () => {
  const r = await openai.chat.completions.create({ model: 'tiny', messages: user('hello'), max_tokens: 6 });
  expect('real backend: openai chat answers text', r.choices[0].message.content.length > 0, JSON.stringify(r));
  expectEq('real backend: ... stopped by max_tokens, counted', [r.choices[0].finish_reason, r.usage.completion_tokens], ['length', 6]);
  let text = '', n = 0;
  for await (const c of await openai.chat.completions.create({ model: 'tiny', messages: user('hello'), max_tokens: 6, stream: true })) {
    text += c.choices[0]?.delta?.content || '';
    n++;
  }
  expectEq('real backend: openai stream, the same text (greedy)', text, r.choices[0].message.content);
  expect('real backend: ... in several chunks', n > 3, `${n}`);
});
await check('real backend: the Ollama route', async () => {
  const parts = [];
  for await (const p of await ollama.chat({ model: 'tiny', messages: user('hello'), stream: true, options: { num_predict: 6 } })) parts.push(p);
  const end = parts[parts.length - 1];
  const ref = await openai.chat.completions.create({ model: 'tiny', messages: user('hello'), max_tokens: 6 });
  expectEq('real backend: ollama chat streamed, the text llama.cpp made', parts.map((p) => p.message.content).join(''), ref.choices[0].message.content);
  expectEq('real backend: ... done_reason length, eval_count 6', [end.done, end.done_reason, end.eval_count], [true, 'length', 6]);
  expect('real backend: ... prompt_eval_count from its usage', end.prompt_eval_count > 0, JSON.stringify(end));
  const g = await ollama.generate({ model: 'tiny', prompt: 'hello', raw: true, stream: false, options: { num_predict: 4 } });
  expect('real backend: ollama generate, raw, through /v1/completions', g.response.length > 0 && g.eval_count === 4, JSON.stringify(g));
  const e = await ollama.embed({ model: 'tiny', input: 'hello' });
  expectEq('real backend: ollama embed, a vector of the model\'s width', e.embeddings[0].length, 64);
});

console.log(`${pass} passed, ${fail} failed`);
process.exit(fail ? 1 : 0);
