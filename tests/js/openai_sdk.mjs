// The official `openai` Node SDK against the emulator, unmodified but for base URL
// and key: chat (plain, streamed, tools, structured output), responses (plain,
// streamed, input token count) and errors. Prints one JSON object of results.
//
//   node openai_sdk.mjs http://127.0.0.1:8787/api/v1 sk-emu-demo-all
//   (EMULATOR_BROKE_KEY: a key of an account without credits, for the 402 check)

import OpenAI from "openai";
import { zodResponseFormat } from "openai/helpers/zod";
import { z } from "zod";

import { expect, runChecks, settings } from "./lib.mjs";

const { baseURL, apiKey, brokeKey } = settings();
const client = new OpenAI({ baseURL, apiKey, maxRetries: 0 });

const CHAT_MODEL = "openai/gpt-4o-mini";
const QUESTION = [{ role: "user", content: "Explain how database indexes speed up queries" }];
const WEATHER_TOOL = {
  type: "function",
  function: {
    name: "get_weather",
    description: "Current weather of a city",
    parameters: {
      type: "object",
      properties: {
        city: { type: "string" },
        unit: { type: "string", enum: ["celsius", "fahrenheit"] },
      },
      required: ["city", "unit"],
      additionalProperties: false,
    },
  },
};
const Recipe = z.object({
  title: z.string(),
  servings: z.number().int(),
  vegetarian: z.boolean(),
  ingredients: z.array(z.string()),
});

// zod writes these as patterns of JavaScript's dialect: `\p{...}`, named groups.
const Tagged = z.object({
  mood: z.string().emoji(),
  release: z.string().regex(/^(?<year>\d{4})-(?<month>\d{2})$/u),
  name: z.string().regex(/^\p{Lu}\p{Ll}+$/u),
});

function summary(completion) {
  const [choice] = completion.choices;
  return {
    id: completion.id,
    model: completion.model,
    text: choice.message.content,
    finish_reason: choice.finish_reason,
    usage: completion.usage,
  };
}

async function chat() {
  return summary(await client.chat.completions.create({ model: CHAT_MODEL, messages: QUESTION }));
}

async function chatStream() {
  const stream = await client.chat.completions.create({
    model: CHAT_MODEL,
    messages: QUESTION,
    stream: true,
    stream_options: { include_usage: true },
  });
  const ids = new Set();
  let text = "";
  let finishReason = null;
  let usage = null;
  let chunks = 0;
  for await (const chunk of stream) {
    chunks += 1;
    ids.add(chunk.id);
    expect(chunk.object === "chat.completion.chunk", `chunk object ${chunk.object}`);
    for (const choice of chunk.choices) {
      text += choice.delta.content ?? "";
      finishReason = choice.finish_reason ?? finishReason;
    }
    if (chunk.usage) {
      expect(chunk.choices.length === 0, "the usage chunk has no choices");
      usage = chunk.usage;
    }
  }
  expect(ids.size === 1, `one id across the chunks, got ${[...ids]}`);
  return { id: [...ids][0], text, finish_reason: finishReason, usage, chunks };
}

async function chatStreamHelper() {
  // The SDK's accumulating helper: it rebuilds the completion from the deltas.
  const stream = client.chat.completions.stream({ model: CHAT_MODEL, messages: QUESTION });
  const completion = await stream.finalChatCompletion();
  return summary(completion);
}

async function toolRoundTrip() {
  const messages = [{ role: "user", content: "What is the weather in Lisbon?" }];
  const first = await client.chat.completions.create({
    model: CHAT_MODEL,
    messages,
    tools: [WEATHER_TOOL],
    tool_choice: "required",
  });
  const [choice] = first.choices;
  expect(choice.finish_reason === "tool_calls", `finish_reason ${choice.finish_reason}`);
  const [call] = choice.message.tool_calls;
  const args = JSON.parse(call.function.arguments);
  expect(typeof args.city === "string", "the city is a string");
  expect(["celsius", "fahrenheit"].includes(args.unit), `unit ${args.unit}`);
  messages.push(choice.message, {
    role: "tool",
    tool_call_id: call.id,
    content: JSON.stringify({ temperature: 21, unit: args.unit }),
  });
  const answer = await client.chat.completions.create({
    model: CHAT_MODEL,
    messages,
    tools: [WEATHER_TOOL],
  });
  return {
    call: { id: call.id, type: call.type, name: call.function.name, arguments: args },
    answer: summary(answer),
  };
}

async function toolStreamHelper() {
  const stream = client.chat.completions.stream({
    model: CHAT_MODEL,
    messages: [{ role: "user", content: "What is the weather in Oslo?" }],
    tools: [WEATHER_TOOL],
    tool_choice: "required",
  });
  const completion = await stream.finalChatCompletion();
  const [choice] = completion.choices;
  const [call] = choice.message.tool_calls;
  return {
    finish_reason: choice.finish_reason,
    name: call.function.name,
    arguments: JSON.parse(call.function.arguments),
  };
}

async function structuredOutput() {
  const completion = await client.chat.completions.parse({
    model: CHAT_MODEL,
    messages: [{ role: "user", content: "A recipe for a quick weeknight dinner" }],
    response_format: zodResponseFormat(Recipe, "recipe"),
  });
  const [choice] = completion.choices;
  const parsed = choice.message.parsed;
  expect(parsed !== null, "the SDK parsed the answer");
  expect(Recipe.safeParse(JSON.parse(choice.message.content)).success, "the JSON validates");
  return { parsed, finish_reason: choice.finish_reason, usage: completion.usage };
}

async function structuredOutputPatterns() {
  const completion = await client.chat.completions.parse({
    model: CHAT_MODEL,
    messages: [{ role: "user", content: "Tag a film release" }],
    response_format: zodResponseFormat(Tagged, "tagged"),
  });
  const [choice] = completion.choices;
  expect(Tagged.safeParse(JSON.parse(choice.message.content)).success, "zod accepts the answer");
  return { parsed: choice.message.parsed };
}

function responseSummary(response) {
  return {
    id: response.id,
    status: response.status,
    model: response.model,
    text: response.output_text,
    output_types: response.output.map((item) => item.type),
    usage: response.usage,
  };
}

async function responses() {
  return responseSummary(
    await client.responses.create({ model: CHAT_MODEL, input: "Explain vector clocks" }),
  );
}

async function responsesStream() {
  const stream = client.responses.stream({ model: CHAT_MODEL, input: "Explain vector clocks" });
  const types = [];
  const sequence = [];
  let deltas = "";
  for await (const event of stream) {
    types.push(event.type);
    sequence.push(event.sequence_number);
    if (event.type === "response.output_text.delta") deltas += event.delta;
  }
  const final = await stream.finalResponse();
  expect(
    sequence.every((n, i) => n === i),
    `sequence numbers count from 0: ${sequence}`,
  );
  return { ...responseSummary(final), deltas, first: types[0], last: types.at(-1) };
}

async function responsesCreateStream() {
  // stream: true on create, the raw event iterator (no helper)
  const stream = await client.responses.create({
    model: CHAT_MODEL,
    input: "Explain vector clocks",
    stream: true,
  });
  let completed = null;
  let deltas = "";
  for await (const event of stream) {
    if (event.type === "response.output_text.delta") deltas += event.delta;
    if (event.type === "response.completed") completed = event.response;
  }
  return { deltas, usage: completed.usage, id: completed.id };
}

async function advanceClock(seconds) {
  // The test server's clock stands still: move it on as time would pass.
  const root = baseURL.replace(/\/api\/v1\/?$/, "");
  const answer = await fetch(`${root}/_emulator/clock`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ advance_seconds: seconds }),
  });
  expect(answer.ok, `the clock moved (${answer.status})`);
}

async function responsesBackground() {
  const asked = { model: CHAT_MODEL, input: "Explain vector clocks", background: true };
  const made = await client.responses.create(asked);
  const polled = [made.status];
  let current = made;
  while (current.status === "queued" || current.status === "in_progress") {
    await advanceClock(1);
    current = await client.responses.retrieve(made.id);
    polled.push(current.status);
  }
  const resumed = [];
  const stream = await client.responses.retrieve(made.id, { stream: true, starting_after: 2 });
  for await (const event of stream) resumed.push(event);
  const other = await client.responses.create(asked);
  const cancelled = await client.responses.cancel(other.id);
  return {
    polled,
    text: current.output_text,
    resumed_first: resumed[0].sequence_number,
    resumed_last: resumed.at(-1).type,
    resumed_text: resumed.at(-1).response.output_text,
    cancelled: cancelled.status,
  };
}

async function responsesTools() {
  const tool = { type: "function", strict: true, ...WEATHER_TOOL.function };
  const first = await client.responses.create({
    model: CHAT_MODEL,
    input: "What is the weather in Rome?",
    tools: [tool],
    tool_choice: "required",
  });
  const call = first.output.find((item) => item.type === "function_call");
  const args = JSON.parse(call.arguments);
  const answer = await client.responses.create({
    model: CHAT_MODEL,
    input: [
      { role: "user", content: "What is the weather in Rome?" },
      call,
      { type: "function_call_output", call_id: call.call_id, output: '{"temperature": 24}' },
    ],
    tools: [tool],
  });
  return { name: call.name, arguments: args, answer: responseSummary(answer) };
}

async function inputTokens() {
  const request = { model: CHAT_MODEL, input: "Explain vector clocks" };
  const counted = await client.responses.inputTokens.count(request);
  const response = await client.responses.create(request);
  return { counted: counted.input_tokens, used: response.usage.input_tokens };
}

async function errorOf(promise) {
  try {
    await promise;
  } catch (error) {
    return {
      class: error.constructor.name,
      is_api_error: error instanceof OpenAI.APIError,
      status: error.status,
      code: error.code,
      type: error.type,
      message: error.message,
    };
  }
  throw new Error("the request succeeded, an error was expected");
}

async function unknownModel() {
  return errorOf(client.chat.completions.create({ model: "openai/gpt-9", messages: QUESTION }));
}

async function noCredits() {
  expect(brokeKey, "EMULATOR_BROKE_KEY names a key without credits");
  const broke = new OpenAI({ baseURL, apiKey: brokeKey, maxRetries: 0 });
  return errorOf(broke.chat.completions.create({ model: CHAT_MODEL, messages: QUESTION }));
}

async function chatLogprobs() {
  const asked = { model: CHAT_MODEL, messages: QUESTION, logprobs: true, top_logprobs: 2 };
  const whole = await client.chat.completions.create(asked);
  const streamed = [];
  for await (const chunk of await client.chat.completions.create({ ...asked, stream: true })) {
    for (const choice of chunk.choices) streamed.push(...(choice.logprobs?.content ?? []));
  }
  const [choice] = whole.choices;
  return { text: choice.message.content, logprobs: choice.logprobs, streamed };
}

async function spokenTurn(messages) {
  const stream = await client.chat.completions.create({
    model: "openai/gpt-audio-mini",
    messages,
    modalities: ["text", "audio"],
    audio: { voice: "alloy", format: "pcm16" },
    stream: true,
  });
  let id = null;
  let transcript = "";
  let bytes = 0;
  let usage = null;
  for await (const chunk of stream) {
    usage = chunk.usage ?? usage;
    for (const choice of chunk.choices) {
      const audio = choice.delta.audio;
      if (!audio) continue;
      id = id ?? audio.id ?? null;
      transcript += audio.transcript ?? "";
      bytes += Buffer.from(audio.data ?? "", "base64").length;
    }
  }
  return { id, transcript, bytes, usage };
}

async function spokenConversation() {
  // OpenAI's guide: the answer's audio id stands for the assistant's turn.
  const first = await spokenTurn(QUESTION);
  const again = [...QUESTION, { role: "assistant", audio: { id: first.id } }];
  const second = await spokenTurn([...again, { role: "user", content: "Say it shorter" }]);
  return { first, second };
}

async function streamCut() {
  // The emulator's fault header cuts the stream after 3 chunks with an error chunk.
  const stream = await client.chat.completions.create(
    { model: CHAT_MODEL, messages: QUESTION, stream: true },
    { headers: { "X-Emulator-Fault": "cut=3" } },
  );
  let chunks = 0;
  const error = await errorOf(
    (async () => {
      for await (const _chunk of stream) chunks += 1;
    })(),
  );
  return { ...error, chunks };
}

await runChecks({
  chat,
  chat_stream: chatStream,
  chat_stream_helper: chatStreamHelper,
  tool_round_trip: toolRoundTrip,
  tool_stream_helper: toolStreamHelper,
  structured_output: structuredOutput,
  structured_output_patterns: structuredOutputPatterns,
  responses,
  responses_stream: responsesStream,
  responses_create_stream: responsesCreateStream,
  responses_tools: responsesTools,
  responses_background: responsesBackground,
  input_tokens: inputTokens,
  unknown_model: unknownModel,
  no_credits: noCredits,
  stream_cut: streamCut,
  chat_logprobs: chatLogprobs,
  spoken_conversation: spokenConversation,
});
