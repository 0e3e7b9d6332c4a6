// The demo dashboard (GET /_emulator/dashboard) in jsdom: its own script runs against
// the live emulator, and the checks click through it as a person would.
//
// usage: node dashboard.mjs BASE_URL API_KEY ACCOUNT_ID [--admin ADMIN_TOKEN]
import { JSDOM } from "jsdom";

import { expect, runChecks, settings } from "./lib.mjs";

const { baseURL, apiKey } = settings();
const accountId = process.argv[4];
const origin = new URL(baseURL).origin;

const dom = await JSDOM.fromURL(`${origin}/_emulator/dashboard`, {
  runScripts: "dangerously",
  pretendToBeVisual: true,
  beforeParse(window) {
    // jsdom has no fetch of its own: Node's, resolved against the page as a browser does.
    window.fetch = (input, init) => fetch(new URL(String(input), window.location.href), init);
    window.TextDecoder = TextDecoder;
    window.confirm = () => true;
    window.localStorage.setItem("emulator.key", apiKey);
    window.localStorage.setItem("emulator.account", accountId);
  },
});
const { document } = dom.window;

async function until(what, found, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = found();
    if (value) return value;
    if (Date.now() > deadline) {
      const notice = document.getElementById("notice").textContent;
      throw new Error(`timed out waiting for ${what} (notice: ${notice || "none"})`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const cells = (row) => [...row.querySelectorAll("td")].map((td) => td.textContent);
const accountRow = () => document.querySelector(`#accounts tr[data-account="${accountId}"]`);
const submit = (id) => document.getElementById(id).requestSubmit();

function choose(selectId, value) {
  const select = document.getElementById(selectId);
  expect([...select.options].some((o) => o.value === value), `${selectId} offers ${value}`);
  select.value = value;
}

// Under --admin-token: the page asks for the token, then shows the control plane.
const adminChecks = {
  asksForTheToken: async () => {
    const form = document.getElementById("admin");
    // The form shows as the refused read fails; the notice once every panel has.
    const refused = await until("the token form and why", () =>
      form.style.display === "flex" && document.getElementById("notice").textContent);
    document.getElementById("admin-token").value = process.argv[6];
    form.requestSubmit();
    const row = await until("the account's row", accountRow);
    const kept = (storage) => storage.getItem("emulator.admin");
    return {
      refused,
      balance: cells(row)[1],
      formShown: form.style.display,
      kept: { tab: kept(dom.window.sessionStorage), origin: kept(dom.window.localStorage) },
    };
  },
};

await runChecks(process.argv[5] === "--admin" ? adminChecks : {
  loads: async () => {
    const row = await until("the account's row", accountRow);
    await until("the models", () => document.querySelectorAll("#model option").length);
    return {
      balance: cells(row)[1],
      chosen: row.className,
      ledger: await until("the ledger", () => document.querySelectorAll("#ledger tbody tr").length),
      version: document.getElementById("version").textContent,
      clock: document.getElementById("clock").textContent,
    };
  },
  topUp: async () => {
    const before = cells(accountRow())[1];
    document.querySelector(`button[data-topup="${accountId}"]`).click();
    await until("the new balance", () => cells(accountRow())[1] !== before);
    const ledger = await until("the top-up in the ledger", () => {
      const top = document.querySelector("#ledger tbody tr");
      return cells(top)[1] === "topup" ? top : null;
    });
    return { balance: cells(accountRow())[1], ledgerTop: cells(ledger).slice(1, 3) };
  },
  chat: async () => {
    choose("model", "openai/gpt-4o-mini");
    document.getElementById("prompt").value = "Explain how database indexes speed up queries";
    submit("chat");
    const usage = await until("the usage line", () => document.getElementById("answer-usage").textContent);
    const usageRow = await until("a usage row", () => document.querySelector("#usage tbody tr"));
    return { text: document.getElementById("answer").textContent, usage, usageRow: cells(usageRow) };
  },
  video: async () => {
    choose("video-model", "emulator/video");
    document.getElementById("video-prompt").value = "A lighthouse on a cliff at dawn";
    submit("video");
    const row = await until("the generation", () => document.querySelector("#videos tr[data-generation]"));
    const id = row.dataset.generation;
    const started = cells(row)[1];
    document.querySelector('[data-advance="86400"]').click();
    const done = await until("the finished video", () => {
      const now = document.querySelector(`#videos tr[data-generation="${id}"]`);
      return now?.querySelector("video") ? now : null;
    });
    return { id, started, status: cells(done)[1], src: done.querySelector("video").getAttribute("src") };
  },
  provider: async () => {
    const select = () => document.querySelector('select[data-provider="azure"]');
    await until("the providers", select);
    select().value = "down";
    select().dispatchEvent(new dom.window.Event("change"));
    await until("azure down", () => select().className === "status-down");
    const down = select().value;
    select().value = "up";
    select().dispatchEvent(new dom.window.Event("change"));
    await until("azure up again", () => select().className === "status-up");
    return { down, up: select().value };
  },
  fault: async () => {
    document.getElementById("fault-path").value = "/api/v1/dashboard-check/*";
    document.getElementById("fault-status").value = "429";
    submit("fault");
    const row = await until("the rule", () => document.querySelector("#faults tr[data-fault]"));
    const shown = cells(row);
    row.querySelector("button").click();
    await until("the rule removed", () => !document.querySelector("#faults tr[data-fault]"));
    return { id: row.dataset.fault, match: shown[1], action: shown[2] };
  },
  requests: async () => {
    const rows = await until("the journal", () => {
      const all = [...document.querySelectorAll("#requests tbody tr")].map(cells);
      return all.some((r) => r[1].startsWith("POST /api/v1/chat/completions")) ? all : null;
    });
    return rows.map((r) => r[1]);
  },
});
// The page's own timers and reads would go on (and outlive a closed window): stop here.
process.exit(0);
