// A test written the way a TypeScript/JavaScript project would write it: the official
// `openai` package, pointed at `fcreplay proxy` by its base URL, one cassette per test.
// Usage: node client.mjs PROXY_URL CASSETTE CONTRACT_JSON
// Prints one JSON line: the decisions it saw, streamed and not, and a tool-loop turn.
import { readFileSync } from "node:fs";
import OpenAI from "openai";

const [proxyUrl, cassette, contractPath] = process.argv.slice(2);
const tools = JSON.parse(readFileSync(contractPath, "utf8")).map((tool) => ({
  type: "function",
  function: { name: tool.name, description: tool.description, parameters: tool.parameters },
}));
const client = new OpenAI({
  baseURL: `${proxyUrl}/v1`,
  apiKey: process.env.FAKE_OPENAI_KEY,
  maxRetries: 0,
  defaultHeaders: { "x-fcreplay-cassette": cassette },
});
const model = "fcreplay-sim-careful";
const question = [{ role: "user", content: "Где заказ ORD-123456?" }];
const calls = (message) =>
  (message.tool_calls ?? []).map((call) => `${call.function.name} ${call.function.arguments}`);

const plain = await client.chat.completions.create({ model, messages: question, tools });
const message = plain.choices[0].message;

// Streamed: the deltas of each call arrive as separate events.
const stream = await client.chat.completions.create({
  model,
  messages: question,
  tools,
  stream: true,
});
const parts = new Map();
let events = 0;
for await (const chunk of stream) {
  events += 1;
  for (const delta of chunk.choices[0]?.delta?.tool_calls ?? []) {
    const part = parts.get(delta.index) ?? { name: "", arguments: "" };
    part.name += delta.function?.name ?? "";
    part.arguments += delta.function?.arguments ?? "";
    parts.set(delta.index, part);
  }
}

// The tool loop: the assistant turn verbatim, then the result under the same call id.
const [call] = message.tool_calls;
const followUp = await client.chat.completions.create({
  model,
  tools,
  messages: [
    ...question,
    message,
    {
      role: "tool",
      tool_call_id: call.id,
      content: JSON.stringify({ order_id: "ORD-123456", status: "in_transit", city: "Самара" }),
    },
  ],
});

console.log(
  JSON.stringify({
    plain: calls(message),
    streamed: [...parts.values()].map((p) => `${p.name} ${p.arguments}`),
    events,
    then: followUp.choices[0].message.content,
  }),
);
