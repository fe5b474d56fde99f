// The hostile neighbour of `bench/neighbour.mjs`: a separate process that floods a sandgate server
// over REST from its own address (127.0.0.2, so its own identity) until the parent says stop.
//
// argv: <server url> <workload,...> <limit s>. Workloads: output-in-call, output-between,
// tool-frames, files. IPC: it sends "started", then "ready" once its workloads are prepared and
// running; {type: "stop"} ends it and it answers {type: "done", counts, errors}.

import { request, Agent } from "node:http";

const [url, list, limitArg] = process.argv.slice(2);
const WORKLOADS = list.split(",");
/** A hostile run never outlives this, whatever the parent does. */
const LIMIT_MS = Number(limitArg) * 1000;
const REQUEST_TIMEOUT_MS = 60_000;
// A connection per request: a kept-alive socket the server closes just as a request goes out would be
// a client-side race counted against the server.
const agent = new Agent({ keepAlive: false, localAddress: "127.0.0.2", maxSockets: 16 });
const stopAll = new AbortController();
const counts = {};
const errors = {};
const sessions = new Set();
const bump = (table, key) => (table[key] = (table[key] ?? 0) + 1);

/** One REST call; resolves {status, body} (the body parsed when it is JSON), never throws. */
function rest(method, path, body, { timeoutMs = REQUEST_TIMEOUT_MS, signal = stopAll.signal } = {}) {
  return new Promise((resolve) => {
    const data = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const req = request(new URL(path, url), {
      method,
      agent,
      headers: data ? { "content-type": "application/json", "content-length": data.length } : {},
      signal: AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]),
    });
    req.on("response", (res) => {
      const chunks = [];
      res.on("data", (c) => chunks.push(c));
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        let parsed;
        try {
          parsed = JSON.parse(text);
        } catch {
          parsed = text.slice(0, 200);
        }
        resolve({ status: res.statusCode, body: parsed, bytes: text.length });
      });
      res.on("error", (e) => resolve({ status: 0, body: e.message }));
    });
    // A server that is gone refuses at once: back off rather than spin.
    req.on("error", (e) => setTimeout(() => resolve({ status: 0, body: e.name === "AbortError" || e.code === "ABORT_ERR" ? "aborted" : e.message }), 200));
    req.end(data);
  });
}

/** Counts what came back: `kind` ok/status, or the HTTP status and error code. */
function record(kind, reply) {
  bump(counts, kind);
  if (reply.status === 0 && stopAll.signal.aborted) return reply; // cut off by our own stop
  if (reply.status !== 200 && reply.status !== 201) bump(errors, `${kind}: HTTP ${reply.status} ${reply.body?.error?.code ?? (typeof reply.body === "string" ? reply.body : "")}`.trim());
  return reply;
}

const execute = (kind, code, extra = {}) => {
  if (extra.session_id) sessions.add(extra.session_id);
  return rest("POST", "/execute", { code, language: "python", ...extra }).then((r) => {
    record(kind, r);
    if (r.status === 200) bump(counts, `${kind} status ${r.body?.status}${r.body?.status === "error" ? ` (${r.body?.error?.type})` : ""}`);
    return r;
  });
};

const running = () => !stopAll.signal.aborted;
const pause = (ms) => new Promise((r) => setTimeout(r, ms));

const PY_FLOOD_IN_CALL = `import os\nb = b"x" * 65536\nwhile True:\n    os.write(1, b)`;
const PY_FLOOD_THREAD = [
  "import os, threading",
  "def flood(fd):",
  "    b = b'y' * 65536",
  "    while True:",
  "        try:",
  "            os.write(fd, b)",
  "        except OSError:",
  "            pass",
  "for fd in (1, 2):",
  "    threading.Thread(target=flood, args=(fd,), daemon=True).start()",
  "'left printing'",
].join("\n");
const JS_FLOOD_TIMER = `const s = "z".repeat(65536); setInterval(() => { for (let i = 0; i < 16; i++) { process.stdout.write(s); process.stderr.write(s); } }, 1); "left printing"`;
/** Raw tool_call frames on fd 4, a thousand per write, never reading a reply on fd 3. */
const PY_FRAMES = (threaded) =>
  [
    "import os, json, struct, threading",
    "def frames():",
    "    n = 0",
    "    while True:",
    "        out = []",
    "        for _ in range(1000):",
    "            b = json.dumps({'type': 'tool_call', 'id': 'e1', 'callId': 'p%d' % n, 'tool': 'nothing.here', 'args': {}}).encode()",
    "            out.append(struct.pack('>I', len(b)) + b)",
    "            n += 1",
    "        os.write(4, b''.join(out))",
    threaded ? "threading.Thread(target=frames, daemon=True).start()\n'left flooding'" : "frames()",
  ].join("\n");
/** Many entries, a deep chain (longer than PATH_MAX), big files; bounded counts. */
const PY_FILES = [
  "import os",
  "os.makedirs('many', exist_ok=True)",
  "for i in range(50000):",
  "    open('many/f%05d' % i, 'w').close()",
  "for i in range(10000):",
  "    os.mkdir('many/d%05d' % i)",
  "here = os.getcwd()",
  "os.makedirs('deep', exist_ok=True)",
  "os.chdir('deep')",
  "for i in range(1500):",
  "    os.mkdir('dd')",
  "    os.chdir('dd')",
  "os.chdir(here)",
  "chunk = b'b' * (1 << 20)",
  "for i in range(4):",
  "    with open('big%d.txt' % i, 'wb') as f:",
  "        for _ in range(30):",
  "            f.write(chunk)",
  "len(os.listdir('many'))",
].join("\n");

/**
 * Per workload: `prepare` runs before the benign client starts measuring (the parent waits for
 * "ready"), `loops` run until stop. Sessions are used again every half second so that the host
 * has a call to attach output left running to.
 */
const workloads = {
  // Prints until the output cap, in a session and statelessly, one call after another.
  "output-in-call": {
    loops: [
      async () => {
        while (running()) await execute("output-in-call session", PY_FLOOD_IN_CALL, { session_id: "hx-out-in", timeout: 20 });
      },
      async () => {
        while (running()) await execute("output-in-call stateless", PY_FLOOD_IN_CALL, { timeout: 20 });
      },
    ],
  },
  // A Python thread and a Node timer keep printing after their call returned.
  "output-between": {
    prepare: async () => {
      sessions.add("hx-between-js");
      await Promise.all([
        execute("output-between python setup", PY_FLOOD_THREAD, { session_id: "hx-between-py", timeout: 20 }),
        rest("POST", "/execute", { code: JS_FLOOD_TIMER, language: "javascript", session_id: "hx-between-js", timeout: 20 }).then((r) => record("output-between node setup", r)),
      ]);
    },
    loops: [
      async () => {
        while (running()) {
          await pause(500);
          await execute("output-between python call", "1", { session_id: "hx-between-py", timeout: 20 });
        }
      },
      async () => {
        while (running()) {
          await pause(500);
          await rest("POST", "/execute", { code: "1", language: "javascript", session_id: "hx-between-js", timeout: 20 }).then((r) => record("output-between node call", r));
        }
      },
    ],
  },
  // Tool-call frames without reading replies: in a stateless call until its timeout, and from a
  // thread left running in a session.
  "tool-frames": {
    prepare: () => execute("tool-frames session setup", PY_FRAMES(true), { session_id: "hx-frames", timeout: 20 }),
    loops: [
      async () => {
        while (running()) await execute("tool-frames stateless", PY_FRAMES(false), { timeout: 20 });
      },
      async () => {
        while (running()) {
          await pause(500);
          await execute("tool-frames session call", "1", { session_id: "hx-frames", timeout: 20 });
        }
      },
    ],
  },
  // Workspaces filled ahead (two at a time); during the measurement each is listed, read and
  // stopped (its tree deleted), and a new one is filled meanwhile.
  files: {
    prepare: () => Promise.all([populate(), populate()]),
    loops: [
      async () => {
        while (running()) {
          const id = filled.shift();
          const refill = populate();
          if (id !== undefined) {
            record("files list root", await rest("GET", `/sessions/${id}/files`));
            record("files list many", await rest("GET", `/sessions/${id}/files?path=many`));
            record("files read big", await rest("GET", `/sessions/${id}/files/content?path=big0.txt&encoding=utf8`));
            record("files read big base64", await rest("GET", `/sessions/${id}/files/content?path=big1.txt&encoding=base64`));
            record("files stop", await rest("DELETE", `/sessions/${id}`, undefined, { signal: new AbortController().signal }));
            sessions.delete(id);
          }
          await refill;
        }
      },
    ],
  },
};

const filled = [];
let filesRound = 0;
async function populate() {
  const id = `hx-files-${filesRound++}`;
  const r = await execute("files populate", PY_FILES, { session_id: id, timeout: 30 });
  // Over the workspace limits the call fails but the session keeps what was written: use it.
  if (r.status === 200) filled.push(id);
}

let finished = false;
async function finish() {
  if (finished) return;
  finished = true;
  stopAll.abort();
  // Stop what it started, as its owner; bounded so that a wedged server cannot hold the bench.
  await Promise.all(
    [...sessions].map((id) => rest("DELETE", `/sessions/${id}`, undefined, { timeoutMs: 30_000, signal: new AbortController().signal }).then((r) => record("cleanup stop", r))),
  );
  agent.destroy();
  process.send?.({ type: "done", counts, errors });
  process.disconnect?.();
}

process.on("message", (msg) => {
  if (msg?.type === "stop") void finish();
});
setTimeout(() => void finish(), LIMIT_MS).unref();
for (const name of WORKLOADS) if (!workloads[name]) throw new Error(`unknown workload ${name}`);
process.send?.({ type: "started" });
await Promise.all(WORKLOADS.map((name) => workloads[name].prepare?.()));
for (const name of WORKLOADS) for (const loop of workloads[name].loops) void loop();
process.send?.({ type: "ready" });
