// Code mode for the Node runner (docs/runner-protocol.md): callMCPTool() and the functions of sandgate's
// operations (searchTools(), listServers(), ... generated in node_ops.cjs) over the frame pipes, ToolError,
// sandgate:servers/<server> modules from /sandgate/tools/manifest.json, and `servers`.
'use strict';

const fs = require('fs');
const vm = require('vm');

// User code shares this realm and may replace any global; keep our own copies.
const NativePromise = Promise;
const { stringify, parse } = JSON;
const { keys: objectKeys, create: objectCreate, freeze, defineProperty } = Object;
const { isArray } = Array;
const readFileSync = fs.readFileSync;
const statSync = fs.statSync;
const captureStackTrace = Error.captureStackTrace;

/**
 * `sendText` writes one frame's JSON to the host; `scriptOptions` are those user code is compiled
 * with (import() must resolve as it does there); `safeString` never throws.
 */
function createCodeMode({ sendText, scriptOptions, safeString }) {
  /** A failed tool call: `tool` as called, `kind` (ToolError, ToolTimeout, ToolLimit, ToolNotFound, ToolDenied, ...). */
  class ToolError extends Error {
    constructor(tool, message, kind = 'ToolError') {
      super(`tool \`${tool}\` failed: ${message}`);
      this.tool = tool;
      this.kind = kind;
    }
  }
  ToolError.prototype.name = 'ToolError';

  let toolCallCounter = 0;
  /** callId -> { resolve, reject, tool, site }; a null-prototype object, out of reach of user code's patches. */
  let pendingTools = objectCreate(null);

  function callMCPTool(tool, args) {
    if (typeof tool !== 'string') {
      return NativePromise.reject(new TypeError('callMCPTool() needs the tool name as a string like "github.search_issues"'));
    }
    if (args === undefined || args === null) args = {};
    else if (typeof args !== 'object' || isArray(args)) {
      return NativePromise.reject(new TypeError(`callMCPTool("${tool}") needs its arguments as an object`));
    }
    return send(tool, { type: 'tool_call', tool, args }, callMCPTool);
  }

  /** Sends one request frame (`fields` without id and callId); `tool` names it in a ToolError, `caller` is cut from its stack. */
  function send(tool, fields, caller) {
    const callId = `j${++toolCallCounter}`;
    let text;
    try {
      text = stringify({ ...fields, id: api.runId, callId });
    } catch (err) {
      return NativePromise.reject(new TypeError(`the arguments of tool \`${tool}\` cannot be sent as JSON: ${safeString(err && err.message)}`));
    }
    // Where the user's code made the call, for the stack of a ToolError (formatted only on failure).
    const site = {};
    captureStackTrace(site, caller);
    return new NativePromise((resolve, reject) => {
      pendingTools[callId] = { resolve, reject, tool, site };
      sendText(text);
    });
  }

  /**
   * The one call of sandgate's operations (op: its id) the generated functions of node_ops.cjs send:
   * `options` is what the caller passed as options (an object, or nothing), `fixed` the positional
   * arguments; `label` names the call in a ToolError, `usage` in a TypeError.
   */
  function callOperation(op, label, caller, usage, options, fixed) {
    if (options === undefined || options === null) options = {};
    else if (typeof options !== 'object' || isArray(options)) {
      return NativePromise.reject(new TypeError(`${usage} needs options as an object`));
    }
    return send(label, { type: 'call', op, args: { ...options, ...fixed } }, caller);
  }
  const operations = require('./node_ops.cjs')(callOperation);

  function settleToolCall(frame) {
    const callId = frame.callId;
    if (typeof callId !== 'string') return;
    const entry = pendingTools[callId];
    if (entry === undefined) return; // the call ended before its reply came
    delete pendingTools[callId];
    if (frame.ok === true) {
      entry.resolve(frame.value);
      return;
    }
    const error = frame.error !== null && typeof frame.error === 'object' ? frame.error : {};
    const message = typeof error.message === 'string' ? error.message : 'the tool failed';
    entry.reject(toolError(entry, message, typeof error.type === 'string' ? error.type : 'ToolError'));
  }

  function toolError(entry, message, kind) {
    const err = new ToolError(entry.tool, message, kind);
    try {
      const frames = String(entry.site.stack).split('\n').slice(1).join('\n');
      err.stack = `${err.name}: ${err.message}\n${frames}`;
    } catch {
      // keep the stack the error has
    }
    return err;
  }

  /** The host drops replies once a call has ended; calls still waiting fail now rather than never. */
  function cancelToolCalls() {
    const entries = pendingTools;
    pendingTools = objectCreate(null);
    for (const callId in entries) {
      const entry = entries[callId];
      entry.reject(toolError(entry, "the code's run ended before the tool replied", 'ToolCancelled'));
    }
  }

  // ---- sandgate:servers/<server> modules and the `servers` global ------------------------

  const MANIFEST_PATH = '/sandgate/tools/manifest.json';
  let manifest = null; // { key, servers: Map name -> entry, aliases: Map camelName -> name, modules: Map }
  // Names that tools like util.inspect, JSON.stringify and await probe; they are never tools.
  const PROBED_NAMES = new Set(['then', 'toJSON', 'constructor', 'inspect', 'asymmetricMatch', 'nodeType', '$$typeof', '__esModule', 'prototype', 'valueOf', 'toString']);

  function camelCase(name) {
    return name.replace(/[-_.\s]+([A-Za-z0-9])/g, (_, c) => c.toUpperCase());
  }

  /** The manifest, read again whenever the file behind it changes (it is replaced by rename). */
  function readManifest() {
    let st;
    try {
      st = statSync(MANIFEST_PATH);
    } catch {
      manifest = null;
      return null;
    }
    const key = `${st.ino}:${st.mtimeMs}:${st.size}`;
    if (manifest && manifest.key === key) return manifest;
    let data;
    try {
      data = parse(readFileSync(MANIFEST_PATH, 'utf8'));
    } catch (err) {
      throw new Error(`the tool manifest ${MANIFEST_PATH} cannot be read: ${safeString(err && err.message)}`);
    }
    const servers = new Map();
    const aliases = new Map();
    const entries = data !== null && typeof data === 'object' && data.servers !== null && typeof data.servers === 'object' ? data.servers : {};
    for (const name of objectKeys(entries)) {
      const entry = entries[name];
      const tools = entry !== null && typeof entry === 'object' && entry.tools !== null && typeof entry.tools === 'object' ? entry.tools : {};
      servers.set(name, tools);
      const alias = camelCase(name);
      if (alias !== name && !(alias in entries)) aliases.set(alias, name);
    }
    manifest = { key, servers, aliases, modules: new Map() };
    return manifest;
  }

  function knownServers(m) {
    const names = m ? [...m.servers.keys()] : [];
    return names.length > 0 ? `the servers are: ${names.join(', ')}` : `no tool servers are available in this sandbox (${MANIFEST_PATH} is ${m ? 'empty' : 'missing'})`;
  }

  /** The object of one server: an async function per tool, and a clear error for a misspelt one. */
  function serverObject(name) {
    const m = readManifest();
    const real = m && (m.servers.has(name) ? name : m.aliases.get(name));
    if (real === undefined || real === null) throw new Error(`no tool server "${name}"; ${knownServers(m)}`);
    let made = m.modules.get(real);
    if (made) return made;
    const tools = m.servers.get(real);
    const target = objectCreate(null);
    for (const tsName of objectKeys(tools)) {
      const id = tools[tsName];
      if (typeof id !== 'string') continue;
      const fn = { [tsName]: (args) => callMCPTool(id, args) }[tsName];
      defineProperty(target, tsName, { value: fn, enumerable: true });
    }
    freeze(target);
    made = new Proxy(target, {
      get(t, key) {
        if (typeof key === 'symbol' || key in t || PROBED_NAMES.has(key)) return t[key];
        throw new TypeError(`server "${real}" has no tool "${key}"; its tools are: ${objectKeys(t).join(', ') || '(none)'}`);
      },
    });
    m.modules.set(real, made);
    return made;
  }

  function sandgateServerName(specifier) {
    const match = /^sandgate:servers\/([^/]+)$/.exec(specifier);
    if (!match) throw new Error(`cannot find module "${specifier}": sandgate modules are "sandgate:servers/<server>"`);
    return match[1];
  }

  /** What import() of a sandgate module gives: the tools as named exports, the server as default. */
  function sandgateNamespace(specifier) {
    const server = serverObject(sandgateServerName(specifier));
    const target = objectCreate(null);
    for (const tsName of objectKeys(server)) target[tsName] = server[tsName];
    target.default = server;
    defineProperty(target, Symbol.toStringTag, { value: 'Module' });
    return new Proxy(freeze(target), {
      get(t, key) {
        if (typeof key === 'symbol' || key in t || PROBED_NAMES.has(key)) return t[key];
        return server[key]; // throws the clear error
      },
    });
  }

  const serversGlobal = new Proxy(objectCreate(null), {
    get(_, key) {
      if (typeof key === 'symbol' || PROBED_NAMES.has(key)) return undefined;
      return serverObject(key);
    },
    has(_, key) {
      const m = typeof key === 'string' ? readManifest() : null;
      return Boolean(m && (m.servers.has(key) || m.aliases.has(key)));
    },
    ownKeys() {
      const m = readManifest();
      return m ? [...m.servers.keys()] : [];
    },
    getOwnPropertyDescriptor(_, key) {
      const m = typeof key === 'string' ? readManifest() : null;
      if (!m || !m.servers.has(key)) return undefined;
      return { value: serverObject(key), enumerable: true, configurable: true, writable: false };
    },
  });

  // Named after the user's file (main.js, as tracebacks show it): a directory alone makes Node name a
  // `noop.js` that does not exist in the "Require stack" of a missing module.
  const userRequireBase = require('module').createRequire(`${process.cwd()}/main.js`);
  function userRequire(id) {
    if (typeof id === 'string' && id.startsWith('sandgate:')) return serverObject(sandgateServerName(id));
    return userRequireBase(id);
  }
  for (const key of ['resolve', 'cache', 'extensions', 'main']) userRequire[key] = userRequireBase[key];

  // import() as user code itself would run it (same loader, specifiers relative to the cwd).
  const nativeImport = vm.runInThisContext('(specifier, options) => import(specifier, options)', {
    ...scriptOptions,
    filename: 'node_runner.cjs:import',
  });

  /** Every import() and static import of user code comes here (the host rewrites them; src/languages/js-transform.ts). */
  function sandgateImport(specifier, options) {
    if (typeof specifier === 'string' && specifier.startsWith('sandgate:')) {
      try {
        return NativePromise.resolve(sandgateNamespace(specifier));
      } catch (err) {
        return NativePromise.reject(err);
      }
    }
    return nativeImport(specifier, options);
  }

  function defineGlobal(name, value) {
    defineProperty(globalThis, name, { value, writable: true, configurable: true, enumerable: false });
  }

  const api = {
    ToolError,
    /** The `execute` call user code runs in; its tool calls carry it. */
    runId: undefined,
    settleToolCall,
    cancelToolCalls,
    installGlobals() {
      globalThis.require = userRequire;
      defineGlobal('callMCPTool', callMCPTool);
      defineGlobal('ToolError', ToolError);
      for (const name of objectKeys(operations)) defineGlobal(name, operations[name]);
      defineGlobal('servers', serversGlobal);
      defineGlobal('__sandgateImport', sandgateImport);
    },
  };
  return api;
}

module.exports = { createCodeMode };
