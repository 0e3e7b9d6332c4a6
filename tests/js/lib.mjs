// Shared by the client scripts: where the emulator is, and a tiny check runner.
//
// A script runs its checks in order, each an async function returning plain data,
// then prints one JSON object {check name: result} on stdout for pytest to assert on.
// The first failing check stops the script: its name, the error and (for SDK errors)
// the HTTP status and body go to stderr, and the exit code is 1.

export function settings() {
  const [baseURL = process.env.EMULATOR_BASE_URL, apiKey = process.env.EMULATOR_API_KEY] =
    process.argv.slice(2);
  if (!baseURL || !apiKey) {
    fail("usage: node <script> BASE_URL API_KEY (or EMULATOR_BASE_URL and EMULATOR_API_KEY)");
  }
  if (!baseURL.endsWith("/api/v1")) {
    fail(`the base URL must end in /api/v1, got ${baseURL}`);
  }
  return { baseURL, apiKey, brokeKey: process.env.EMULATOR_BROKE_KEY };
}

export async function runChecks(checks) {
  const results = {};
  for (const [name, check] of Object.entries(checks)) {
    try {
      results[name] = await check();
    } catch (error) {
      const detail = { check: name, error: String(error?.stack ?? error) };
      for (const field of ["status", "code", "type", "responseBody", "cause"]) {
        if (error?.[field] !== undefined) detail[field] = String(error[field]);
      }
      fail(JSON.stringify(detail, null, 2));
    }
  }
  process.stdout.write(`${JSON.stringify(results)}\n`);
}

export function expect(condition, message) {
  if (!condition) throw new Error(`expectation failed: ${message}`);
}

function fail(message) {
  process.stderr.write(`${message}\n`);
  process.exit(1);
}
