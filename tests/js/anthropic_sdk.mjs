// Anthropic's TypeScript SDK (`@anthropic-ai/sdk`, which Claude Code is built on) against
// OpenRouter's Anthropic-compatible API, unmodified but for base URL and key: the base URL
// is `.../api` (the SDK adds `/v1/messages`), the key a bearer token (`authToken`) as
// OpenRouter's docs set Claude Code up, or Anthropic's `x-api-key` (`apiKey`). Whole and
// streamed messages, a tool round trip, structured output through the parse helpers, the
// beta tool runner, a stop sequence, thinking, search results, web search, the token
// count and the SDK's error classes. Prints one JSON object.
//
//   node anthropic_sdk.mjs http://127.0.0.1:8787/api/v1 sk-emu-demo-all

import Anthropic from "@anthropic-ai/sdk";
import { betaZodTool } from "@anthropic-ai/sdk/helpers/beta/zod";
import { zodOutputFormat } from "@anthropic-ai/sdk/helpers/zod";
import { z } from "zod";

import { expect, runChecks, settings } from "./lib.mjs";

const { baseURL, apiKey, brokeKey } = settings();
const anthropicURL = baseURL.replace(/\/v1$/, "");
// `apiKey: null`: the SDK would otherwise read ANTHROPIC_API_KEY from the environment.
const bearer = (key) =>
  new Anthropic({ baseURL: anthropicURL, authToken: key, apiKey: null, maxRetries: 0 });
const client = bearer(apiKey);

const MODEL = "anthropic/claude-sonnet-4";
const QUESTION = [{ role: "user", content: "Explain how database indexes speed up queries" }];
const WEATHER = {
  name: "get_weather",
  description: "The weather in a city",
  input_schema: {
    type: "object",
    properties: { city: { type: "string" } },
    required: ["city"],
  },
};

await runChecks({
  async message() {
    const { data, response } = await client.messages
      .create({ model: MODEL, max_tokens: 300, messages: QUESTION })
      .withResponse();
    return {
      id: data.id,
      generation: response.headers.get("x-generation-id"),
      type: data.type,
      text: data.content[0].text,
      stopReason: data.stop_reason,
      inputTokens: data.usage.input_tokens,
      outputTokens: data.usage.output_tokens,
      charge: data.usage.charge_micros,
    };
  },
  async stream() {
    const stream = client.messages.stream({ model: MODEL, max_tokens: 300, messages: QUESTION });
    const kinds = [];
    stream.on("streamEvent", (event) => kinds.push(event.type));
    const text = await stream.finalText();
    const final = await stream.finalMessage();
    const order = kinds.filter((kind, i) => kind !== kinds[i - 1]); // each run of one kind once
    return { text, order, stopReason: final.stop_reason, outputTokens: final.usage.output_tokens };
  },
  async toolRoundTrip() {
    const asked = await client.messages.create({
      model: MODEL,
      max_tokens: 300,
      tools: [WEATHER],
      messages: QUESTION,
    });
    const call = asked.content.find((block) => block.type === "tool_use");
    expect(call, "the answer calls the tool");
    const answer = await client.messages.create({
      model: MODEL,
      max_tokens: 300,
      tools: [WEATHER],
      messages: [
        ...QUESTION,
        { role: "assistant", content: asked.content },
        {
          role: "user",
          content: [{ type: "tool_result", tool_use_id: call.id, content: "21 degrees" }],
        },
      ],
    });
    return {
      stopReason: asked.stop_reason,
      id: call.id,
      city: typeof call.input.city,
      then: answer.stop_reason,
      text: answer.content[0].text,
    };
  },
  async structuredOutput() {
    // `output_config.format`, which the SDK's parse helpers (and its `output_format`) send.
    const Person = z.object({ name: z.string(), age: z.number().int() });
    const ask = {
      model: MODEL,
      max_tokens: 300,
      messages: [{ role: "user", content: "Describe a person" }],
      output_config: { format: zodOutputFormat(Person) },
    };
    const whole = await client.messages.parse(ask);
    const streamed = await client.messages.stream(ask).finalMessage();
    return {
      whole: Person.safeParse(whole.parsed_output).success,
      streamed: Person.safeParse(streamed.parsed_output).success,
    };
  },
  async toolRunner() {
    // The SDK's agent loop threads its turns; the refusal of `thread` makes it send each
    // turn whole, as it does with a server that keeps no threads.
    const tool = betaZodTool({
      name: "get_weather",
      description: "The weather in a city",
      inputSchema: z.object({ city: z.string() }),
      run: async ({ city }) => `21 degrees in ${city}`,
    });
    const runner = client.beta.messages.toolRunner({
      model: MODEL,
      max_tokens: 400,
      tools: [tool],
      messages: [{ role: "user", content: "What is the weather in Oslo?" }],
    });
    const turns = [];
    for await (const message of runner) turns.push(message.stop_reason);
    return { turns };
  },
  async stopSequence() {
    const whole = await client.messages.create({
      model: MODEL,
      max_tokens: 300,
      stop_sequences: ["."],
      messages: QUESTION,
    });
    const text = whole.content[0].text;
    return { stopReason: whole.stop_reason, stopSequence: whole.stop_sequence, text };
  },
  async thinking() {
    const message = await client.messages.create({
      model: MODEL,
      max_tokens: 2000,
      thinking: { type: "enabled", budget_tokens: 1024 },
      messages: QUESTION,
    });
    return {
      blocks: message.content.map((block) => block.type),
      signed: message.content[0].signature?.length > 0,
    };
  },
  async searchResults() {
    // Search results with citations, whole and streamed: the stream's `citation` events
    // and its final message, whose blocks must be the whole answer's.
    const result = (source, text) => ({
      type: "search_result",
      source,
      title: `About ${source}`,
      content: [{ type: "text", text }],
      citations: { enabled: true },
    });
    const messages = [
      {
        role: "user",
        content: [
          result("https://docs.example.com/a", "Indexes are sorted copies of columns."),
          result("kb://b", "A query planner picks an index when it helps."),
          { type: "text", text: "How do indexes speed up queries?" },
        ],
      },
    ];
    const asked = { model: MODEL, max_tokens: 400, messages };
    const whole = await client.messages.create(asked);
    const stream = client.messages.stream(asked);
    const cited = [];
    stream.on("citation", (citation) => cited.push(citation.search_result_index));
    const final = await stream.finalMessage();
    return {
      same: JSON.stringify(final.content) === JSON.stringify(whole.content),
      cited,
      citations: whole.content.flatMap((block) => block.citations ?? []),
    };
  },
  async webSearch() {
    // Anthropic's web search tool: the search's blocks and the text's citations, whole
    // and streamed (the final message must be the whole answer, the search's id aside),
    // then the blocks sent back in the next turn.
    const asked = {
      model: MODEL,
      max_tokens: 400,
      messages: QUESTION,
      tools: [{ type: "web_search_20250305", name: "web_search", max_uses: 2 }],
    };
    const whole = await client.messages.create(asked);
    const stream = client.messages.stream(asked);
    const cited = [];
    stream.on("citation", (citation) => cited.push(citation.url));
    const final = await stream.finalMessage();
    const withoutIds = (message) =>
      JSON.stringify(message.content.map(({ id, tool_use_id, ...block }) => block));
    const next = await client.messages.create({
      ...asked,
      messages: [
        ...QUESTION,
        { role: "assistant", content: whole.content },
        { role: "user", content: "Which of those is most recent?" },
      ],
    });
    return {
      blocks: whole.content.map((block) => block.type),
      query: whole.content[0].input.query,
      results: whole.content[1].content.map((result) => result.url),
      citations: whole.content.flatMap((block) => block.citations ?? []),
      requests: final.usage.server_tool_use?.web_search_requests,
      same: withoutIds(final) === withoutIds(whole),
      streamedInput: final.content[0].input,
      cited,
      next: next.content.slice(0, 2).map((block) => block.type),
    };
  },
  async webFetch() {
    // Anthropic's web fetch tool: a call and a result for each URL, whole and streamed,
    // then the blocks sent back in the next turn.
    const asked = {
      model: MODEL,
      max_tokens: 400,
      messages: [{ role: "user", content: "Summarize https://docs.example.com/b-trees" }],
      tools: [{ type: "web_fetch_20250910", name: "web_fetch" }],
    };
    const whole = await client.messages.create(asked);
    const final = await client.messages.stream(asked).finalMessage();
    const next = await client.messages.create({
      ...asked,
      messages: [
        ...asked.messages,
        { role: "assistant", content: whole.content },
        { role: "user", content: "Thanks" },
      ],
    });
    const fetched = whole.content[1].content;
    return {
      blocks: whole.content.map((block) => block.type),
      streamed: final.content.map((block) => block.type),
      input: final.content[0].input,
      url: fetched.url,
      title: fetched.content.title,
      source: fetched.content.source.type,
      requests: final.usage.server_tool_use?.web_fetch_requests,
      next: next.stop_reason,
    };
  },
  async countTokens() {
    const counted = await client.messages.countTokens({ model: MODEL, messages: QUESTION });
    return { inputTokens: counted.input_tokens };
  },
  async xApiKey() {
    // Anthropic's own header, as the SDK sends a key given as `apiKey`.
    const other = new Anthropic({ baseURL: anthropicURL, apiKey, maxRetries: 0 });
    const message = await other.messages.create({
      model: MODEL,
      max_tokens: 20,
      messages: QUESTION,
    });
    return { stopReason: message.stop_reason };
  },
  async errors() {
    const classes = {};
    const ask = (sdk, model, maxTokens) =>
      sdk.messages.create({ model, max_tokens: maxTokens, messages: QUESTION });
    const cases = {
      notFound: () => ask(client, "nope/nothing", 10),
      badRequest: () => ask(client, MODEL, 0),
      unpaid: () => ask(bearer(brokeKey), MODEL, 10),
    };
    for (const [name, call] of Object.entries(cases)) {
      try {
        await call();
        classes[name] = "no error";
      } catch (error) {
        expect(error instanceof Anthropic.APIError, `${name} raised ${error}`);
        classes[name] = { status: error.status, class: error.constructor.name };
      }
    }
    return classes;
  },
});
