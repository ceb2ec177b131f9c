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

try {
  await client.chat.completions.create({ model: "router:best", messages });
  out.error = "none";
} catch (e) {
  out.error = { status: e.status, message: e.error?.message ?? e.message };
}
console.log(JSON.stringify(out));
