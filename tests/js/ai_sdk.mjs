// The Vercel AI SDK (`ai`) against the emulator through one provider package,
// unmodified but for base URL and key: generateText, streamText, generateObject
// and `Output.object` with a zod schema, tool calling (a full round trip) and a
// stream cut mid-way.
//
//   node ai_sdk.mjs BASE_URL API_KEY compatible   (@ai-sdk/openai-compatible)
//   node ai_sdk.mjs BASE_URL API_KEY openrouter   (@openrouter/ai-sdk-provider)
//   node ai_sdk.mjs BASE_URL API_KEY openai       (@ai-sdk/openai: the responses API)
//   (EMULATOR_BROKE_KEY: a key of an account without credits, for the 402 check)

import { createOpenAI } from "@ai-sdk/openai";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { createOpenRouter } from "@openrouter/ai-sdk-provider";
import {
  APICallError,
  generateObject,
  generateText,
  Output,
  stepCountIs,
  streamText,
  tool,
} from "ai";
import { z } from "zod";

import { expect, runChecks, settings } from "./lib.mjs";

const { baseURL, apiKey, brokeKey } = settings();
const providerName = process.argv[4] ?? process.env.EMULATOR_AI_PROVIDER;
const TITLE = "AI SDK test";
const REFERER = "https://app.example.test";

function languageModel(modelId, key = apiKey) {
  if (providerName === "compatible") {
    const provider = createOpenAICompatible({
      name: "emulator",
      baseURL,
      apiKey: key,
      headers: { "X-Title": TITLE, "HTTP-Referer": REFERER },
      // generateObject sends a json_schema response format only with this set
      supportsStructuredOutputs: true,
    });
    return provider.chatModel(modelId);
  }
  if (providerName === "openrouter") {
    return createOpenRouter({ baseURL, apiKey: key, appName: TITLE, appUrl: REFERER }).chat(
      modelId,
    );
  }
  if (providerName === "openai") {
    // `provider(modelId)` is the responses API, the package's default since AI SDK 5.
    const headers = { "X-Title": TITLE, "HTTP-Referer": REFERER };
    return createOpenAI({ baseURL, apiKey: key, headers })(modelId);
  }
  throw new Error(`the provider is "compatible", "openrouter" or "openai", got ${providerName}`);
}

const model = languageModel("openai/gpt-4o-mini");
const PROMPT = "Explain how database indexes speed up queries";
const common = { model, prompt: PROMPT, maxRetries: 0 };

function usageOf(usage) {
  return {
    inputTokens: usage.inputTokens,
    outputTokens: usage.outputTokens,
    totalTokens: usage.totalTokens,
  };
}

async function text() {
  const result = await generateText(common);
  return {
    text: result.text,
    finishReason: result.finishReason,
    usage: usageOf(result.usage),
    id: result.response.id,
  };
}

async function stream() {
  const result = streamText({ ...common, onError: () => {} });
  let chunks = 0;
  let streamed = "";
  for await (const delta of result.textStream) {
    chunks += 1;
    streamed += delta;
  }
  const fullText = await result.text;
  expect(streamed === fullText, "the text stream adds up to the final text");
  const response = await result.response;
  return {
    text: fullText,
    chunks,
    finishReason: await result.finishReason,
    usage: usageOf(await result.usage),
    id: response.id,
  };
}

const Recipe = z.object({
  title: z.string(),
  servings: z.number().int(),
  vegetarian: z.boolean(),
  ingredients: z.array(z.string()),
  // A tuple and an exclusive bound: zod writes draft-07 (`items` as a list).
  prep: z.tuple([z.number().int().gt(0), z.enum(["minutes", "hours"])]),
});

async function object() {
  const result = await generateObject({
    model,
    schema: Recipe,
    schemaName: "recipe",
    prompt: "A recipe for a quick weeknight dinner",
    maxRetries: 0,
  });
  expect(Recipe.safeParse(result.object).success, "the object validates");
  return {
    object: result.object,
    finishReason: result.finishReason,
    usage: usageOf(result.usage),
  };
}

async function outputObject() {
  // AI SDK 6's form of generateObject (deprecated in 7): a text call with an `output`.
  const output = Output.object({ schema: Recipe, name: "recipe" });
  const prompt = "A recipe for a quick weeknight dinner";
  const generated = await generateText({ model, output, prompt, maxRetries: 0 });
  const streamed = streamText({ model, output, prompt, maxRetries: 0 });
  let partials = 0;
  for await (const _ of streamed.partialOutputStream) partials += 1;
  const streamedOutput = await streamed.output;
  for (const value of [generated.output, streamedOutput]) {
    expect(Recipe.safeParse(value).success, "the output validates");
  }
  return {
    output: generated.output,
    finishReason: generated.finishReason,
    streamedOutput,
    partials,
  };
}

const calls = [];
const weather = tool({
  description: "Current weather of a city",
  inputSchema: z.object({ city: z.string(), unit: z.enum(["celsius", "fahrenheit"]) }),
  execute: async ({ city, unit }) => {
    calls.push({ city, unit });
    return { city, temperature: 21, unit };
  },
});

async function tools() {
  // An agent loop as users write it: call the tool, feed the result back, answer.
  const result = await generateText({
    model,
    prompt: "What is the weather in Lisbon?",
    tools: { get_weather: weather },
    stopWhen: stepCountIs(5),
    maxRetries: 0,
  });
  const [first, second] = result.steps;
  return {
    steps: result.steps.length,
    executed: [...calls],
    firstFinishReason: first.finishReason,
    toolCalls: first.toolCalls.map((call) => ({ name: call.toolName, input: call.input })),
    toolResults: first.toolResults.map((r) => r.output),
    text: second?.text,
    finishReason: result.finishReason,
    totalUsage: usageOf(result.totalUsage),
  };
}

async function streamTools() {
  const result = streamText({
    model,
    prompt: "What is the weather in Oslo and Bergen?", // two cities: two calls at once
    tools: { get_weather: tool({ ...weather, execute: undefined }) },
    toolChoice: "required",
    maxRetries: 0,
  });
  const toolCalls = await result.toolCalls;
  return {
    finishReason: await result.finishReason,
    toolCalls: toolCalls.map((call) => ({ name: call.toolName, input: call.input })),
    usage: usageOf(await result.usage),
  };
}

async function streamCut() {
  // The emulator's fault header cuts the stream after 3 chunks with an error chunk.
  const errors = [];
  const result = streamText({
    ...common,
    headers: { "X-Emulator-Fault": "cut=3" },
    onError: ({ error }) => errors.push(error),
  });
  const types = [];
  for await (const part of result.fullStream) types.push(part.type);
  expect(errors.length === 1, `one error reported, got ${errors.length}`);
  return {
    types: [...new Set(types)],
    finishReason: await result.finishReason,
    error: errors[0]?.message ?? String(errors[0]),
  };
}

async function errorOf(promise) {
  try {
    await promise;
  } catch (error) {
    return {
      name: error.name,
      is_api_call_error: APICallError.isInstance(error),
      statusCode: error.statusCode,
      isRetryable: error.isRetryable,
      code: error.data?.error?.code,
      type: error.data?.error?.type,
      message: error.message,
    };
  }
  throw new Error("the call succeeded, an error was expected");
}

async function unknownModel() {
  return errorOf(generateText({ ...common, model: languageModel("openai/gpt-9") }));
}

async function noCredits() {
  expect(brokeKey, "EMULATOR_BROKE_KEY names a key without credits");
  const broke = languageModel("openai/gpt-4o-mini", brokeKey);
  return errorOf(generateText({ ...common, model: broke }));
}

// A fetch that keeps the JSON body of each request, to check what a provider sent.
function recording(sent) {
  return (url, init) => {
    sent.push(JSON.parse(init.body));
    return fetch(url, init);
  };
}

// OpenRouter's provider asks for reasoning (a model setting), reads `reasoning_details`
// (whole and streamed), and sends them back on the assistant message of the next turn.
async function reasoning() {
  if (providerName !== "openrouter") return null;
  const sent = [];
  const watched = recording(sent);
  const reasoner = createOpenRouter({ baseURL, apiKey, fetch: watched }).chat(
    "deepseek/deepseek-r1",
    { reasoning: { effort: "low" } },
  );
  const question = { role: "user", content: PROMPT };
  const result = await generateText({ model: reasoner, messages: [question], maxRetries: 0 });
  const streamed = streamText({ model: reasoner, messages: [question], maxRetries: 0 });
  const streamedReasoning = await streamed.reasoningText;
  const next = await generateText({
    model: reasoner,
    messages: [question, ...result.response.messages, { role: "user", content: "And B-trees?" }],
    maxRetries: 0,
  });
  const sentBack = sent.at(-1).messages[1];
  // Anthropic's thinking, streamed: its signature comes last, and goes back next turn.
  const claude = createOpenRouter({ baseURL, apiKey, fetch: watched }).chat(
    "anthropic/claude-sonnet-4",
    { reasoning: { effort: "low" } },
  );
  const thought = streamText({ model: claude, messages: [question], maxRetries: 0 });
  const thoughtMessages = (await thought.response).messages;
  const warned = [];
  const warn = console.warn;
  console.warn = (...args) => warned.push(args.join(" "));
  try {
    await generateText({
      model: claude,
      messages: [question, ...thoughtMessages, { role: "user", content: "And B-trees?" }],
      maxRetries: 0,
    });
  } finally {
    console.warn = warn;
  }
  return {
    signedBack: sent.at(-1).messages[1],
    signedReasoningText: await thought.reasoningText,
    signatureWarnings: warned.filter((w) => w.includes("signature")),
    text: result.text,
    reasoningText: result.reasoningText,
    streamedReasoningText: streamedReasoning,
    reasoningTokens: result.usage.outputTokenDetails?.reasoningTokens,
    outputTokens: result.usage.outputTokens,
    id: result.response.id,
    nextText: next.text,
    sentBack,
  };
}

// The OpenAI provider (responses API) keeps answers by default (`store`): the next turn
// names its earlier items by `item_reference` instead of sending them again, the
// assistant's text and, from a reasoning model, its reasoning.
async function webSearchTool() {
  // The OpenAI provider's own web search tool: its call is OpenAI's `web_search_call`.
  if (providerName !== "openai") return null;
  const provider = createOpenAI({ baseURL, apiKey });
  const ask = {
    model: provider("openai/gpt-4o-mini"),
    tools: { web_search: provider.tools.webSearch({}) },
    prompt: "What is new in reef science?",
    maxRetries: 0,
  };
  const made = await generateText(ask);
  const streamed = streamText(ask);
  const parts = [];
  for await (const part of streamed.fullStream) parts.push(part.type);
  return {
    calls: made.toolCalls.map((c) => [c.toolName, c.providerExecuted]),
    results: made.toolResults.map((r) => r.toolName),
    sources: made.sources.length,
    text: made.text,
    streamedParts: [...new Set(parts)].filter((t) => t.startsWith("tool") || t === "source"),
  };
}

async function storedItems() {
  if (providerName !== "openai") return null;
  const sent = [];
  const watched = recording(sent);
  const provider = createOpenAI({ baseURL, apiKey, fetch: watched });
  const question = { role: "user", content: PROMPT };
  const chatModel = provider("openai/gpt-4o-mini");
  const first = await generateText({ model: chatModel, messages: [question], maxRetries: 0 });
  const next = await generateText({
    model: chatModel,
    messages: [question, ...first.response.messages, { role: "user", content: "And B-trees?" }],
    maxRetries: 0,
  });
  const conversationInput = sent.at(-1).input;
  const loop = await generateText({
    model: provider("openai/o4-mini"),
    prompt: "What is the weather in Lisbon?",
    tools: { get_weather: weather },
    stopWhen: stepCountIs(3),
    maxRetries: 0,
    // The package knows reasoning models by OpenAI's own ids: "openai/o4-mini" is told.
    providerOptions: {
      openai: { reasoningEffort: "low", reasoningSummary: "auto", forceReasoning: true },
    },
  });
  return {
    nextText: next.text,
    conversationInput,
    loopSteps: loop.steps.length,
    loopText: loop.text,
    loopReasoning: loop.steps[0].reasoningText,
    loopInput: sent.at(-1).input,
  };
}

// A PDF as each provider sends one (chat `file` parts, responses `input_file`), to the
// echo model, which answers the text it read.
async function pdf() {
  const data = Buffer.from(process.env.EMULATOR_PDF, "base64");
  const file = { type: "file", data, mediaType: "application/pdf", filename: "moon.pdf" };
  const content = [{ type: "text", text: "Read this." }, file];
  const result = await generateText({
    model: languageModel("emulator/echo"),
    messages: [{ role: "user", content }],
    maxRetries: 0,
  });
  return result.text;
}

// A WAV clip as a file part: providers that carry audio send an `input_audio` part,
// whose 32 tokens a second the usage counts; the echo model answers the text.
async function audio() {
  const data = Buffer.from(process.env.EMULATOR_WAV, "base64");
  const content = [
    { type: "text", text: "Transcribe." },
    { type: "file", data, mediaType: "audio/wav" },
  ];
  const messages = [{ role: "user", content }];
  const model = languageModel("emulator/echo");
  try {
    const result = await generateText({ model, messages, maxRetries: 0 });
    const plain = await generateText({ model, prompt: "Transcribe.", maxRetries: 0 });
    return { text: result.text, extraTokens: result.usage.inputTokens - plain.usage.inputTokens };
  } catch (error) {
    return { refused: error.name };
  }
}

// OpenAI's image generation tool through the OpenAI provider (responses API): the
// provider-executed call's result is the picture's base64, and a stream shows the
// partial images as results before the final one (this version of `ai` drops their
// `preliminary` flag for a provider-executed tool).
async function imageTool() {
  if (providerName !== "openai") return null;
  const sent = [];
  const provider = createOpenAI({ baseURL, apiKey, fetch: recording(sent) });
  const settings = { outputFormat: "webp", partialImages: 2, size: "256x128" };
  const tools = { image_generation: provider.tools.imageGeneration(settings) };
  const request = {
    model: provider("openai/gpt-4o-mini"),
    prompt: "Draw a picture of a lighthouse at dusk",
    tools,
    maxRetries: 0,
  };
  const whole = await generateText(request);
  // A second turn edits the picture: the SDK names the kept call by reference.
  const ask = { role: "user", content: request.prompt };
  const again = { role: "user", content: "Now make the picture look like a painting" };
  const { prompt, ...rest } = request;
  const edit = await generateText({ ...rest, messages: [ask, ...whole.response.messages, again] });
  const editInput = sent.at(-1).input;
  const streamed = streamText(request);
  const parts = [];
  for await (const part of streamed.fullStream) parts.push(part);
  const resultOf = (part) => ({
    toolName: part.toolName,
    providerExecuted: part.providerExecuted ?? null,
    picture: part.output.result,
  });
  return {
    text: whole.text,
    results: whole.content.filter((part) => part.type === "tool-result").map(resultOf),
    streamedText: await streamed.text,
    streamedResults: parts.filter((part) => part.type === "tool-result").map(resultOf),
    errors: parts.filter((part) => part.type === "error").map((part) => String(part.error)),
    editInput,
    editResults: edit.content.filter((part) => part.type === "tool-result").map(resultOf),
  };
}

await runChecks({
  text,
  stream,
  object,
  output_object: outputObject,
  tools,
  stream_tools: streamTools,
  stream_cut: streamCut,
  unknown_model: unknownModel,
  no_credits: noCredits,
  reasoning,
  stored_items: storedItems,
  web_search_tool: webSearchTool,
  pdf,
  audio,
  image_tool: imageTool,
});
