// OpenRouter's own TypeScript SDK (`@openrouter/sdk`) against the emulator, unmodified
// but for base URL and key. It checks every answer against its zod schemas, so a field
// missing or mistyped fails the call: chat (whole, streamed), responses (whole,
// streamed), the server tools' items, the catalog views, generation stats and
// credits. Prints one JSON object.
//
//   node openrouter_sdk.mjs http://127.0.0.1:8787/api/v1 sk-emu-demo-all

import { OpenRouter } from "@openrouter/sdk";

import { expect, runChecks, settings } from "./lib.mjs";

const { baseURL, apiKey } = settings();
const client = new OpenRouter({ apiKey, serverURL: baseURL, retryConfig: { strategy: "none" } });

const MODEL = "openai/gpt-4o-mini";
const QUESTION = [{ role: "user", content: "Explain how database indexes speed up queries" }];

async function collect(stream) {
  const items = [];
  for await (const item of stream) items.push(item);
  return items;
}

let chatId;

await runChecks({
  async chat() {
    const answer = await client.chat.send({ chatRequest: { model: MODEL, messages: QUESTION } });
    chatId = answer.id;
    return {
      id: answer.id,
      text: answer.choices[0].message.content,
      finish: answer.choices[0].finishReason,
      cost: answer.usage.cost,
      upstream: answer.usage.costDetails.upstreamInferenceCost,
    };
  },
  async chatStream() {
    const chunks = await collect(
      await client.chat.send({ chatRequest: { model: MODEL, messages: QUESTION, stream: true } }),
    );
    const text = chunks.map((c) => c.choices[0]?.delta?.content ?? "").join("");
    const usage = chunks.at(-1).usage;
    return { text, promptTokens: usage.promptTokens, cost: usage.cost };
  },
  async responses() {
    const answer = await client.responses.send({
      responsesRequest: { model: MODEL, input: "Explain how database indexes speed up queries" },
    });
    const details = answer.usage.costDetails;
    return {
      id: answer.id,
      status: answer.status,
      inputCost: details.upstreamInferenceInputCost,
      outputCost: details.upstreamInferenceOutputCost,
    };
  },
  async responsesStream() {
    const events = await collect(
      await client.responses.send({
        responsesRequest: { model: MODEL, input: "Explain indexes", stream: true },
      }),
    );
    const unknown = events.filter((e) => e.isUnknown || e.type === "UNKNOWN").map((e) => e.type);
    const last = events.at(-1);
    return { unknown, last: last.type, cost: last.response?.usage?.cost };
  },
  async catalog() {
    const listed = (await client.models.list()).result; // a page: `next()` for more
    const counted = await client.models.count();
    const one = await client.models.get({ author: "openai", slug: "gpt-4o-mini" });
    const endpoints = await client.endpoints.list({ author: "openai", slug: "gpt-4o-mini" });
    const providers = await client.providers.list();
    return {
      listed: listed.data.length,
      counted: counted.data.count,
      one: one.data.id,
      endpoints: endpoints.data.endpoints.map((e) => e.tag),
      providers: providers.data.map((p) => p.slug),
    };
  },
  async reasoning() {
    // Each vendor's shape of `reasoningDetails`, as the SDK types them.
    const shapes = {};
    for (const provider of ["anthropic", "openai"]) {
      const model = provider === "anthropic" ? "anthropic/claude-sonnet-4" : "openai/o4-mini";
      const answer = await client.chat.send({
        chatRequest: {
          model,
          messages: QUESTION,
          reasoning: { effort: "low" },
          provider: { only: [provider] },
        },
      });
      const [detail] = answer.choices[0].message.reasoningDetails;
      shapes[provider] = { type: detail.type, format: detail.format, signed: !!detail.signature };
    }
    return shapes;
  },
  async webSearchAndCache() {
    const system = { role: "system", content: "Keep every rule. ".repeat(400) };
    const ask = () =>
      client.chat.send({ chatRequest: { model: `${MODEL}:online`, messages: [system, ...QUESTION] } });
    await ask();
    const answer = await ask();
    // Its chat message type has no `annotations` (dropped); its responses part types them.
    const response = await client.responses.send({
      responsesRequest: { model: MODEL, input: "Explain indexes", plugins: [{ id: "web" }] },
    });
    const part = response.output[0].content[0];
    return {
      cited: answer.choices[0].message.content.includes("Sources: ["),
      citations: part.annotations.map((a) => a.type),
      cached: answer.usage.promptTokensDetails.cachedTokens,
    };
  },
  async serverTools() {
    // The datetime and web fetch tools' calls, as the SDK types them (whole and streamed).
    const tools = [
      { type: "openrouter:datetime", parameters: { timezone: "Europe/Paris" } },
      { type: "openrouter:web_fetch" },
    ];
    const input = "What is new today on https://docs.example.com/release-notes";
    const whole = await client.responses.send({ responsesRequest: { model: MODEL, input, tools } });
    const events = await collect(
      await client.responses.send({ responsesRequest: { model: MODEL, input, tools, stream: true } }),
    );
    const chat = await client.chat.send({
      chatRequest: { model: MODEL, messages: [{ role: "user", content: input }], tools },
    });
    const [clock, page] = whole.output;
    return {
      types: whole.output.map((item) => item.type),
      timezone: clock.timezone,
      datetime: clock.datetime,
      url: page.url,
      httpStatus: page.httpStatus,
      streamed: events.filter((e) => e.type === "response.output_item.done").map((e) => e.item.type),
      unknown: events.filter((e) => e.isUnknown || e.type === "UNKNOWN").length,
      details: chat.usage.serverToolUseDetails,
    };
  },
  async generation() {
    expect(chatId, "the chat check ran first");
    const stats = await client.generations.getGeneration({ id: chatId });
    return { id: stats.data.id, model: stats.data.model, total: stats.data.totalCost };
  },
  async credits() {
    const credits = await client.credits.getCredits();
    return { total: credits.data.totalCredits, used: credits.data.totalUsage };
  },
});
