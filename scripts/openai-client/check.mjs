// check.mjs drives jeirt serve with the official OpenAI Node SDK, as a user's
// application would, and prints what it got as one JSON object (the Go test
// TestOpenAINodeClient checks the values).
//
//   node scripts/openai-client/check.mjs http://127.0.0.1:8080/v1 [TOKEN]
import OpenAI from "openai";

const [baseURL, apiKey = "none"] = process.argv.slice(2);
const client = new OpenAI({ baseURL, apiKey, maxRetries: 0 });
const messages = [{ role: "user", content: "Fix the off-by-one error in the pagination helper" }];
const out = {};

const ids = [];
for await (const m of client.models.list()) ids.push(m.id);
out.models = ids;
out.retrieved = (await client.models.retrieve("router")).id;

const r = await client.chat.completions.create({ model: "router", messages });
out.chat = { model: r.model, content: r.choices[0].message.content };

const stream = await client.chat.completions.create({ model: "router:shortlist?k=2", messages, stream: true });
let text = "", chunks = 0;
for await (const c of stream) {
  chunks++;
  text += c.choices[0]?.delta?.content ?? "";
}
out.stream = { chunks, content: text };

// An API error: its status and OpenAI's error object (message, type, param, code).
const apiError = (e) => ({ status: e.status ?? null, name: e.constructor.name, message: e.error?.message ?? e.message,
  type: e.type ?? null, param: e.param ?? null, code: e.code ?? null });

try {
  await client.chat.completions.create({ model: "router:best", messages });
  out.error = "none";
} catch (e) {
  out.error = apiError(e);
}

// A wrong method: 405 with Allow.
const res = await fetch(baseURL + "/chat/completions", { headers: { Authorization: `Bearer ${apiKey}` } });
out.wrongMethod = { status: res.status, allow: res.headers.get("allow"), error: (await res.json()).error };

// With the test upstreams of TestOpenAINodeClient (when the server lists
// them): a stream the upstream cuts off must throw in the for-await loop,
// and an upstream's HTML page must be an API error, not a completion.
if (ids.includes("jeirt-check-truncated")) {
  const cut = await client.chat.completions.create({ model: "jeirt-check-truncated", messages, stream: true });
  let got = "", n = 0;
  out.truncated = { thrown: false };
  try {
    for await (const c of cut) {
      n++;
      got += c.choices[0]?.delta?.content ?? "";
    }
  } catch (e) {
    out.truncated = { thrown: true, ...apiError(e) };
  }
  out.truncated.chunks = n;
  out.truncated.content = got;
}
if (ids.includes("jeirt-check-html")) {
  try {
    const r = await client.chat.completions.create({ model: "jeirt-check-html", messages });
    out.html = { thrown: false, completion: r };
  } catch (e) {
    out.html = { thrown: true, ...apiError(e) };
  }
}
console.log(JSON.stringify(out));
