// Node runner for sandgate (docs/runner-protocol.md): frames on fds 3/4, user code on the
// global scope so declarations persist between calls, and the end-of-call procedure.
'use strict';

const fs = require('fs');
const vm = require('vm');
const { Buffer } = require('buffer');
const { Writable } = require('stream');

const FRAMES_IN = 3;
const FRAMES_OUT = 4;
const MAX_FRAME_BYTES = 64 * 1024 * 1024;
const MAX_VALUE_BYTES = 64 * 1024;

// User code shares this realm and may replace any global; the runner keeps its own copies.
const NativePromise = Promise;
const { stringify, parse } = JSON;
const { getPrototypeOf, keys: objectKeys } = Object;
const { isArray } = Array;
const { isInteger } = Number;
const ObjectPrototype = Object.prototype;
const ArrayPrototype = Array.prototype;
const VmScript = vm.Script;
const runScript = Function.prototype.call.bind(vm.Script.prototype.runInThisContext);
const writeSync = fs.writeSync;
const readFileSync = fs.readFileSync;
const readdirSync = fs.readdirSync;
const kill = process.kill.bind(process);
const realExit = process.exit.bind(process);
const streamWrite = Writable.prototype.write;
const microtask = queueMicrotask;
// User code may replace process.env; the runner sets and restores variables on the real one.
const realEnv = process.env;
const hasOwn = Function.prototype.call.bind(Object.prototype.hasOwnProperty);
const sleepCell = new Int32Array(new SharedArrayBuffer(4));
const scriptOptions = { filename: 'main.js' };
// SIGINT from the host (a timeout or cancel) interrupts synchronous user code of a call the host may
// interrupt (docs/runner-protocol.md). The watchdog costs a thread start and stop, 0.1-0.3 ms, on every
// script run: a call the host kills instead (a stateless one) runs without it.
const interruptibleRun = { breakOnSigint: true };
const plainRun = {};
let runOptions = plainRun;
if (vm.constants && vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER) {
  scriptOptions.importModuleDynamically = vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER;
}

/** Thrown by the patched process.exit so a user's exit ends the call, not the runner. */
class ExitSignal extends Error {
  constructor(code) {
    super(`process.exit(${code})`);
    this.code = code;
  }
}
ExitSignal.prototype.name = 'ProcessExit';

// callMCPTool, ToolError, `servers`, sandgate:servers/<server> modules and the import() loader.
const codeMode = require('./node_code_mode.cjs').createCodeMode({ sendText, scriptOptions, safeString });
// The global `sandgate`: sandgate.show() returns images to the agent.
const images = require('./node_images.cjs').createImages({ sendText, runId: () => codeMode.runId });

/** The call in progress: from the start of user code until its completion value settles. */
let active = null;
let busy = false;
let inputEnded = false;
const queue = [];

// ---- frames ---------------------------------------------------------------------------

function sleep(ms) {
  Atomics.wait(sleepCell, 0, 0, ms);
}

/** Blocking write of the whole buffer, whatever the fd's O_NONBLOCK state. */
function writeAll(fd, buffer) {
  let offset = 0;
  while (offset < buffer.length) {
    try {
      offset += writeSync(fd, buffer, offset, buffer.length - offset);
    } catch (err) {
      if (err.code === 'EAGAIN') sleep(1);
      else if (err.code !== 'EINTR') throw err;
    }
  }
}

/** `valueJson` is already JSON text, spliced in so large values are serialized once. */
function sendFrame(frame, valueJson) {
  let text = stringify(frame);
  if (valueJson !== undefined) text = `${text.slice(0, -1)},"value":${valueJson}}`;
  sendText(text);
}

function sendText(text) {
  const body = Buffer.from(text, 'utf8');
  const out = Buffer.allocUnsafe(4 + body.length);
  out.writeUInt32BE(body.length, 0);
  body.copy(out, 4);
  try {
    writeAll(FRAMES_OUT, out);
  } catch {
    realExit(70); // the host is gone or fd 4 was closed under us: nothing left to serve
  }
}

let chunks = [];
let buffered = 0;
let bodyLength = -1;

function onData(chunk) {
  chunks.push(chunk);
  buffered += chunk.length;
  const need = () => (bodyLength < 0 ? 4 : bodyLength);
  while (buffered >= need()) {
    let all = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, buffered);
    if (bodyLength < 0) {
      bodyLength = all.readUInt32BE(0);
      if (bodyLength > MAX_FRAME_BYTES) protocolError(`frame of ${bodyLength} bytes exceeds 64 MiB`);
      all = all.subarray(4);
    } else {
      const body = all.subarray(0, bodyLength);
      all = all.subarray(bodyLength);
      bodyLength = -1;
      onFrame(body);
    }
    chunks = all.length ? [all] : [];
    buffered = all.length;
  }
}

function protocolError(message) {
  writeAll(2, Buffer.from(`sandgate node runner: protocol error: ${message}\n`));
  realExit(2);
}

function onFrame(body) {
  let frame;
  try {
    frame = parse(body.toString('utf8'));
  } catch {
    protocolError('frame is not JSON');
  }
  if (frame === null || typeof frame !== 'object') return;
  if (frame.type === 'tool_result') return codeMode.settleToolCall(frame);
  if (frame.type !== 'execute') return;
  queue.push(frame);
  if (!busy) void drainQueue();
}

function onInputEnd() {
  inputEnded = true;
  if (!busy) realExit(0);
}

async function drainQueue() {
  busy = true;
  while (queue.length > 0) {
    const frame = queue.shift();
    try {
      await handleExecute(frame);
    } catch (err) {
      // A runner bug; report it on the call rather than leave the host waiting.
      const id = typeof frame.id === 'string' ? frame.id : '';
      sendFrame({ type: 'result', id, ok: false, exitCode: 1, error: runnerError(err) });
    }
  }
  busy = false;
  if (inputEnded) realExit(0);
}

// ---- one call -------------------------------------------------------------------------

async function handleExecute(frame) {
  const { id, code, marker, filename } = frame;
  const keepProcesses = frame.keepProcesses === true;
  let outcome;
  if (typeof id !== 'string' || typeof code !== 'string' || typeof marker !== 'string') {
    const message = 'execute frame needs string id, code and marker';
    outcome = { fields: { ok: false, exitCode: 1, error: { type: 'ProtocolError', message, traceback: '' } } };
  } else {
    scriptOptions.filename = typeof filename === 'string' && filename ? filename : 'main.js';
    callLines = typeof frame.source === 'string' && frame.source !== code ? { run: code.split('\n'), written: frame.source.split('\n') } : null;
    codeMode.runId = id;
    images.setMaxBytes(frame.maxImageBytes);
    runOptions = frame.interruptible === true ? interruptibleRun : plainRun;
    const savedEnv = setEnv(frame.env);
    try {
      // The host wraps top-level await itself ("async" mode), so both modes run the same way.
      outcome = await runUserCode(code);
    } finally {
      restoreEnv(savedEnv);
    }
  }
  codeMode.runId = undefined;
  codeMode.cancelToolCalls();
  if (typeof marker === 'string') await endOfCall(marker, keepProcesses);
  sendFrame({ type: 'result', id: typeof id === 'string' ? id : '', ...outcome.fields }, outcome.valueJson);
}

/** Sets the call's environment variables; returns what each was (undefined: unset) for restoreEnv. */
function setEnv(env) {
  const saved = [];
  if (typeof env !== 'object' || env === null) return saved;
  for (const name of objectKeys(env)) {
    if (typeof env[name] !== 'string') continue;
    saved.push([name, hasOwn(realEnv, name) ? realEnv[name] : undefined]);
    realEnv[name] = env[name];
  }
  return saved;
}

function restoreEnv(saved) {
  for (const [name, value] of saved) {
    if (value === undefined) delete realEnv[name];
    else realEnv[name] = value;
  }
}

function runUserCode(code) {
  let finish;
  const done = new NativePromise((resolve) => {
    finish = (outcome) => {
      if (active !== call) return;
      active = null;
      if (callTimers === call.timers) callTimers = null;
      resolve(outcome);
    };
  });
  const call = { finish, exitSignal: null, timers: new Set() };
  active = call;
  callTimers = call.timers;
  process.exitCode = undefined;
  let script;
  try {
    script = new VmScript(code, scriptOptions);
  } catch (err) {
    finish(failure(compileError(err), call));
    return done;
  }
  let completion;
  try {
    completion = runScript(script, runOptions);
  } catch (err) {
    if (err && err.code === 'ERR_SCRIPT_EXECUTION_INTERRUPTED') clearTimers(call);
    finish(failure(err, call));
    return done;
  }
  // A thenable completion value is awaited; resolving it may itself run user code.
  NativePromise.resolve(completion).then(
    (value) => finish(success(value, call)),
    (err) => finish(failure(err, call)),
  );
  return done;
}

/** V8 runs out of stack compiling deeply nested code: that is the code's fault, a syntax error. */
function compileError(err) {
  if (!(err instanceof RangeError) || !/call stack/i.test(String(err.message))) return err;
  const error = new SyntaxError('the code is nested too deeply to parse; split it into smaller expressions');
  error.stack = `${scriptOptions.filename}:1\n${error.name}: ${error.message}`;
  return error;
}

/**
 * Runs `work` (the runner's own code over user values, whose getters run) as script
 * code, so the call's SIGINT interrupts it like the code itself instead of finding a busy loop.
 */
const INTERRUPTIBLE_WORK = Symbol.for('sandgate.runner.work');
const interruptibleScript = new VmScript(`globalThis[Symbol.for('sandgate.runner.work')]()`, { filename: 'sandgate-runner' });
function interruptible(work) {
  globalThis[INTERRUPTIBLE_WORK] = work;
  try {
    return runScript(interruptibleScript, runOptions);
  } finally {
    delete globalThis[INTERRUPTIBLE_WORK];
  }
}

function success(value, call) {
  if (call.exitSignal) return exitOutcome(call.exitSignal);
  if (value === undefined) return { fields: { ok: true, exitCode: 0 } };
  let described;
  try {
    // Only an object can run user code while it is described (getters, toJSON, proxies); a
    // primitive, or a call nothing interrupts, skips the interruptible run and its SIGINT watchdog.
    const runsUserCode = runOptions === interruptibleRun && value !== null && (typeof value === 'object' || typeof value === 'function');
    described = runsUserCode ? interruptible(() => describeValue(value)) : describeValue(value);
  } catch (err) {
    if (!err || err.code !== 'ERR_SCRIPT_EXECUTION_INTERRUPTED') throw err;
    clearTimers(call);
    return failure(err, call);
  }
  return { fields: { ok: true, exitCode: 0, valueKind: described.kind }, valueJson: described.json };
}

function failure(err, call) {
  if (err instanceof ExitSignal) return exitOutcome(err);
  if (call && call.exitSignal) return exitOutcome(call.exitSignal);
  return { fields: { ok: false, exitCode: 1, error: errorInfo(err) } };
}

function exitOutcome(signal) {
  if (signal.code === 0) return { fields: { ok: true, exitCode: 0 } };
  // vm's displayErrors decorates the stack with the runner's own `throw` line; start after it.
  const stack = cleanStack(signal.stack);
  const traceback = stack.slice(Math.max(0, stack.indexOf(`${signal.name}: `)));
  const error = { type: 'ProcessExit', message: signal.message, traceback };
  return { fields: { ok: false, exitCode: signal.code, error } };
}

function exitStatus(code) {
  if (code === undefined || code === null) code = process.exitCode === undefined ? 0 : process.exitCode;
  const n = Number(code);
  return isInteger(n) ? n & 0xff : 1;
}

process.exit = function exit(code) {
  const signal = new ExitSignal(exitStatus(code));
  const call = active;
  if (call && !call.exitSignal) {
    call.exitSignal = signal;
    // Like a real exit, the call ends even if user code catches the signal and carries on.
    microtask(() => call.finish(exitOutcome(signal)));
  }
  throw signal;
};

/**
 * Errors nobody caught, often from timers an earlier call left behind, are printed like the Node
 * REPL does and never end the runner. A process.exit() from a callback ends the running call.
 */
function onUncaught(err) {
  // A tool call nobody awaited, failed because its run ended: nothing to tell anyone about.
  if (err instanceof codeMode.ToolError && err.kind === 'ToolCancelled') return;
  // A timers/promises sleep or interval of an interrupted call, stopped with it.
  if (err !== null && typeof err === 'object' && err.name === 'AbortError' && err.cause === TIMER_STOPPED) return;
  if (err instanceof ExitSignal) {
    if (active) active.finish(exitOutcome(err));
    else writeStderr(`${err.message} called outside a running call; ignored\n`);
    return;
  }
  writeStderr(`Uncaught ${errorInfo(err).traceback}\n`);
}

/**
 * SIGINT outside synchronous script code (breakOnSigint covers that): code awaiting something that
 * never settles is abandoned and the call ends; its timers and pending promises stay, as they do
 * after any call. A busy loop after an `await` keeps the event loop from getting here: the host
 * kills the sandbox after its grace.
 */
function onInterrupt() {
  const call = active;
  if (!call) return;
  const message = 'the call was interrupted while it awaited a promise that had not settled';
  clearTimers(call);
  call.finish({ fields: { ok: false, exitCode: 1, error: { type: 'Interrupted', message, traceback: `Interrupted: ${message}` } } });
}

/**
 * Timers a call starts (setTimeout, setInterval, setImmediate) go on after it ends, as in a REPL;
 * those of an interrupted call are cleared with it, so its interval or immediate loop does not
 * run on into later calls. Pending ones are tracked per call, and only while it runs; one that
 * fires or that the code clears is forgotten at once (a debounce loop must not hold them all).
 */
let callTimers = null;
/** A tracked timer's handle -> its call's set and its entry there, for the clear functions. */
const trackedTimers = new WeakMap();
const timersModule = require('node:timers');
const timersPromises = require('node:timers/promises');
for (const [setName, clearName] of [['setTimeout', 'clearTimeout'], ['setInterval', 'clearInterval'], ['setImmediate', 'clearImmediate']]) {
  const realSet = globalThis[setName];
  const realClear = globalThis[clearName];
  const repeats = setName === 'setInterval';
  const wrapped = function (callback, ...rest) {
    const timers = callTimers;
    if (timers === null || typeof callback !== 'function') return Reflect.apply(realSet, this, [callback, ...rest]);
    const entry = { clear: realClear, handle: undefined };
    const run = repeats
      ? callback
      : function (...args) {
          timers.delete(entry);
          return Reflect.apply(callback, this, args);
        };
    entry.handle = Reflect.apply(realSet, this, [run, ...rest]);
    timers.add(entry);
    if (entry.handle !== null && typeof entry.handle === 'object') trackedTimers.set(entry.handle, { timers, entry });
    return entry.handle;
  };
  const wrappedClear = function (handle) {
    const tracked = handle !== null && typeof handle === 'object' ? trackedTimers.get(handle) : undefined;
    if (tracked !== undefined) {
      tracked.timers.delete(tracked.entry);
      trackedTimers.delete(handle);
    }
    return Reflect.apply(realClear, this, [handle]);
  };
  // Keeps name, length and util.promisify.custom, so promisify(setTimeout) still works.
  Object.defineProperties(wrapped, Object.getOwnPropertyDescriptors(realSet));
  Object.defineProperties(wrappedClear, Object.getOwnPropertyDescriptors(realClear));
  globalThis[setName] = wrapped;
  globalThis[clearName] = wrappedClear;
  // The same functions as code reaches them through require('timers') or import from 'node:timers'.
  if (timersModule[setName] === realSet) timersModule[setName] = wrapped;
  if (timersModule[clearName] === realClear) timersModule[clearName] = wrappedClear;
}

// timers/promises (await setTimeout(ms), for await of setInterval(ms)): each pending one of a call
// gets an abort signal, so an interrupt rejects it (AbortError) instead of letting it tick on.
// Left uncaught, that rejection is no news to anyone (onUncaught drops it).
const TIMER_STOPPED = new Error('the interrupted call\'s timer was stopped');
for (const [name, optionsAt] of [['setTimeout', 2], ['setImmediate', 1], ['setInterval', 2]]) {
  const real = timersPromises[name];
  const wrapped = function (...args) {
    const timers = callTimers;
    if (timers === null) return Reflect.apply(real, this, args);
    const options = args[optionsAt];
    if (options !== undefined && (options === null || typeof options !== 'object')) return Reflect.apply(real, this, args);
    const controller = new AbortController();
    const entry = { clear: (c) => c.abort(TIMER_STOPPED), handle: controller };
    const signal = options?.signal instanceof AbortSignal ? AbortSignal.any([options.signal, controller.signal]) : controller.signal;
    args.length = Math.max(args.length, optionsAt + 1);
    args[optionsAt] = { ...options, signal };
    timers.add(entry);
    const result = Reflect.apply(real, this, args);
    if (name !== 'setInterval' && result instanceof Promise) result.then(() => timers.delete(entry), () => timers.delete(entry));
    return result;
  };
  Object.defineProperties(wrapped, Object.getOwnPropertyDescriptors(real));
  timersPromises[name] = wrapped;
}
require('node:module').syncBuiltinESMExports();

function clearTimers(call) {
  for (const { clear, handle } of call.timers) clear(handle);
  call.timers.clear();
}

process.on('SIGINT', onInterrupt);
process.on('uncaughtException', onUncaught);
process.on('unhandledRejection', onUncaught);

// ---- describing values and errors -----------------------------------------------------

function describeValue(value) {
  try {
    if (isJsonable(value)) {
      const json = stringify(value);
      if (Buffer.byteLength(json) <= MAX_VALUE_BYTES) return { kind: 'json', json };
    }
  } catch {
    // getters, proxies and deep nesting fall back to inspect
  }
  return { kind: 'repr', json: stringify(truncate(inspect(value))) };
}

/** Plain data that JSON carries without loss, within roughly the value budget. */
function isJsonable(root) {
  let budget = MAX_VALUE_BYTES;
  const ancestors = new Set();
  const check = (v) => {
    if (v === null || typeof v === 'boolean') return (budget -= 5) >= 0;
    if (typeof v === 'number') return isFinite(v) && (budget -= 8) >= 0;
    if (typeof v === 'string') return (budget -= v.length + 2) >= 0;
    if (typeof v !== 'object' || ancestors.has(v)) return false;
    const proto = getPrototypeOf(v);
    ancestors.add(v);
    if (isArray(v)) {
      if (proto !== ArrayPrototype) return false;
      for (let i = 0; i < v.length; i++) if (!(i in v) || !check(v[i]) || (budget -= 1) < 0) return false;
    } else {
      if (proto !== ObjectPrototype && proto !== null) return false;
      if (typeof v.toJSON === 'function') return false;
      for (const key of objectKeys(v)) if ((budget -= key.length + 4) < 0 || !check(v[key])) return false;
    }
    ancestors.delete(v);
    return true;
  };
  return check(root);
}

let util;
function inspect(value) {
  try {
    if (!util) util = require('util');
    return util.inspect(value);
  } catch (err) {
    return `[value that cannot be inspected: ${safeString(err && err.message)}]`;
  }
}

function truncate(text) {
  if (Buffer.byteLength(text) <= MAX_VALUE_BYTES) return text;
  const head = Buffer.from(text).subarray(0, MAX_VALUE_BYTES - 32).toString('utf8').replace(/\uFFFD$/, '');
  return `${head}… [truncated]`;
}

function safeString(value) {
  try {
    return String(value);
  } catch {
    return inspect(value);
  }
}

const PACKAGE_NAMES_FILE = '/sandgate/packages/node/sandgate-packages.txt';

/** A package that is not installed: how to get it, as runners/sandgate_packages.py says it for Python. */
function missingPackageAdvice(err) {
  if (err.code !== 'MODULE_NOT_FOUND' && err.code !== 'ERR_MODULE_NOT_FOUND') return '';
  const match = /Cannot find (?:module|package) '([^']+)'/.exec(String(err.message));
  const spec = match ? match[1] : '';
  if (spec === '' || /^(?:\.|\/|node:|file:|sandgate:)/.test(spec)) return '';
  const name = spec.split('/').slice(0, spec.startsWith('@') ? 2 : 1).join('/');
  let names = [];
  try {
    names = fs.readFileSync(PACKAGE_NAMES_FILE, 'utf8').trim().split(',').filter(Boolean);
  } catch {
    // no package set synced
  }
  const have = names.length > 0 ? `use the installed set: ${names.join(', ')}` : 'use what the system has (no extra packages are installed)';
  return `no network in this sandbox: ask the admin to add ${name} to node.packages (then \`sandgate packages sync\`), or ${have}`;
}

const NO_NETWORK = 'no network in this sandbox: only loopback (127.0.0.1) is reachable; work on files in /workspace (uploaded, or written with file_write) or call the configured MCP servers\' tools';
/** Error codes of a failed name lookup or of no route: what reaching past loopback gives here. */
const NETWORK_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'ENETUNREACH', 'EHOSTUNREACH']);

/** An error from reaching the network (fetch's "fetch failed" wraps it in `cause`): there is none. */
function networkAdvice(err) {
  try {
    const pending = [err];
    for (let seen = 0; pending.length > 0 && seen < 32; seen++) {
      const item = pending.pop();
      if (item === null || typeof item !== 'object') continue;
      if (NETWORK_CODES.has(item.code)) return NO_NETWORK;
      pending.push(item.cause);
      if (Array.isArray(item.errors)) pending.push(...item.errors.slice(0, 8));
    }
  } catch {
    // a getter or proxy of the code's own error object: no advice rather than no error
  }
  return '';
}

function errorInfo(err) {
  try {
    if (err !== null && typeof err === 'object' && typeof err.stack === 'string') {
      const ctor = err.constructor;
      const type = (ctor && typeof ctor.name === 'string' && ctor.name) || 'Error';
      const message = typeof err.message === 'string' ? err.message : safeString(err.message);
      const advice = missingPackageAdvice(err) || networkAdvice(err);
      if (advice !== '') {
        const traceback = cleanStack(err.stack) || `${type}: ${message}`;
        return { type, message: `${message.split('\n')[0]}; ${advice}`, traceback: `${traceback}\n${advice}` };
      }
      return { type, message, traceback: cleanStack(err.stack) || `${type}: ${message}` };
    }
    const message = typeof err === 'string' ? err : inspect(err);
    return { type: 'Error', message, traceback: `Uncaught ${inspect(err)}` };
  } catch (inner) {
    return runnerError(inner);
  }
}

function runnerError(err) {
  const message = `internal error in the Node runner: ${safeString(err && err.message)}`;
  return { type: 'RunnerError', message, traceback: safeString(err && err.stack) };
}

/**
 * The current call's code as run and as the user wrote it (the execute frame's `source`, when the
 * host rewrote it: TypeScript, imports, top-level await), line for line; null when they are the same.
 */
let callLines = null;

/**
 * V8's "file:line, source, caret" header: one in Node's own files (a require that failed) is
 * dropped; one in the user's file shows the line as the user wrote it instead of as it ran (the
 * caret then goes: its column is of the rewritten line).
 */
function userHeader(stack) {
  const match = /^([^\n]+):(\d+)\n([^\n]*)\n([ \t]*\^[^\n]*\n)?\n/.exec(stack);
  if (match === null) return stack;
  const [whole, file, line, text] = match;
  if (file.startsWith('node:')) return stack.slice(whole.length);
  if (callLines === null || file !== scriptOptions.filename || callLines.run[line - 1] !== text) return stack;
  const written = callLines.written[line - 1];
  if (written === undefined || written === text) return stack;
  return `${file}:${line}\n${written}\n\n${stack.slice(whole.length)}`;
}

const RUNNER_FRAME = /\/sandgate\/runners\/|\(node:internal\/|at node:internal\/|\(node:vm:/;
/** V8's "file:line, source, caret" header of an error thrown synchronously, when the file is ours. */
const RUNNER_HEADER = /^\/sandgate\/runners\/[^\n]*:\d+\n(?:[^\n]*\n)*?\n/;

/**
 * Drops the runner's own frames (runner and code-mode files: the user sees only their file and
 * libraries) and everything that called into user code through the runner.
 */
function cleanStack(stack) {
  if (typeof stack !== 'string') return '';
  const out = [];
  let reachedUser = false;
  for (const line of userHeader(stack.replace(RUNNER_HEADER, '')).split('\n')) {
    if (!/^\s+at /.test(line)) {
      out.push(line);
      continue;
    }
    if (!RUNNER_FRAME.test(line)) {
      reachedUser = true;
      out.push(line);
    } else if (line.includes('(node:vm:')) {
      reachedUser = true; // compile errors have no user frame; below vm is all runner
    } else if (reachedUser && line.includes('node_runner.cjs')) {
      break;
    }
  }
  return out.join('\n');
}

// ---- end of a call --------------------------------------------------------------------

function writeStderr(text) {
  writeToStream(process.stderr, 2, text);
}

/** Resolves once `text` has left the stream; falls back to the raw fd if the stream is unusable. */
function writeToStream(stream, fd, text) {
  return new NativePromise((resolve) => {
    try {
      while (stream.writableCorked) stream.uncork();
      if (!stream.destroyed && !stream.writableEnded) {
        streamWrite.call(stream, text, () => resolve());
        return;
      }
    } catch {
      // fall through to the raw descriptor
    }
    try {
      writeAll(fd, Buffer.from(text));
    } catch {
      // the host stopped reading; it will notice on its own
    }
    resolve();
  });
}

function flushed(stream, fd) {
  return stream.writableLength > 0 || stream.writableCorked ? writeToStream(stream, fd, '') : undefined;
}

async function endOfCall(marker, keepProcesses) {
  const out = process.stdout;
  const err = process.stderr;
  await NativePromise.all([flushed(out, 1), flushed(err, 2)]);
  if (keepProcesses) keepSurvivors();
  else stopOtherProcesses();
  await NativePromise.all([writeToStream(out, 1, marker), writeToStream(err, 2, marker)]);
}

let killPlan;

/**
 * Killing is only safe in the sandbox's own pid namespace, whose pid 1 is bubblewrap; a runner
 * started by hand on a host must not kill that host's processes. Ancestors (a launcher between
 * bubblewrap and the runner) are kept, or the sandbox would fall with them.
 */
function decideKillPlan() {
  if (process.pid !== 1) {
    try {
      if (!readFileSync('/proc/1/comm', 'latin1').includes('bwrap')) return null;
    } catch {
      return null;
    }
  }
  const keep = new Set([1, process.pid]);
  for (let pid = process.ppid; pid > 1 && !keep.has(pid); pid = parentOf(pid)) keep.add(pid);
  // kill(-1) reaches everything but pid 1 and ourselves atomically, so a fork loop cannot outrun it.
  return { keep, killAll: keep.size <= 2 };
}

function parentOf(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return 0;
  }
}

/** Processes calls asked to keep (keepProcesses), pid -> start time; they end with the sandbox. */
const kept = new Map();

function statOf(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state: fields[0], ppid: Number(fields[1]), start: fields[19] };
  } catch {
    return null;
  }
}

function keepSurvivors() {
  if (killPlan === undefined) killPlan = decideKillPlan();
  if (!killPlan) return;
  for (const pid of liveOthers(killPlan.keep)) {
    const stat = statOf(pid);
    if (stat) kept.set(pid, stat.start);
  }
}

/** `keep` plus the kept processes still alive (same pid and start time) and their descendants. */
function withKept(keep) {
  if (kept.size === 0) return keep;
  const stats = new Map();
  for (const name of readdirSync('/proc')) {
    const c = name.charCodeAt(0);
    if (c < 48 || c > 57) continue;
    const stat = statOf(Number(name));
    if (stat && stat.state !== 'Z' && stat.state !== 'X') stats.set(Number(name), stat);
  }
  for (const [pid, start] of kept) if (!stats.has(pid) || stats.get(pid).start !== start) kept.delete(pid);
  const spared = new Set(keep);
  const stack = [...kept.keys()];
  for (const pid of stack) spared.add(pid);
  while (stack.length > 0) {
    const parent = stack.pop();
    for (const [pid, stat] of stats) {
      if (stat.ppid === parent && !spared.has(pid)) {
        spared.add(pid);
        stack.push(pid);
      }
    }
  }
  return spared;
}

function liveOthers(keep) {
  const pids = [];
  for (const name of readdirSync('/proc')) {
    const c = name.charCodeAt(0);
    if (c < 48 || c > 57) continue;
    const pid = Number(name);
    if (keep.has(pid)) continue;
    let stat;
    try {
      stat = readFileSync(`/proc/${name}/stat`, 'latin1');
    } catch (err) {
      if (err.code !== 'ENOENT' && err.code !== 'ESRCH') pids.push(pid);
      continue;
    }
    const state = stat.charAt(stat.lastIndexOf(')') + 2);
    if (state !== 'Z' && state !== 'X') pids.push(pid); // a zombie has already closed its files
  }
  return pids;
}

function stopOtherProcesses() {
  if (killPlan === undefined) killPlan = decideKillPlan();
  if (!killPlan) return;
  const keep = withKept(killPlan.keep);
  const killAll = killPlan.killAll && keep === killPlan.keep;
  for (let round = 0; round < 1000; round++) {
    const alive = liveOthers(keep);
    if (alive.length === 0) return;
    const targets = killAll ? [-1] : alive;
    for (const pid of targets) {
      try {
        kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    if (round > 0) sleep(1);
  }
}

// ---- start ----------------------------------------------------------------------------

// Every first dynamic import() would otherwise print an ExperimentalWarning into user output.
const emitWarning = process.emitWarning;
process.emitWarning = function (warning, ...rest) {
  const text = typeof warning === 'string' ? warning : warning && warning.message;
  if (typeof text === 'string' && text.includes('USE_MAIN_CONTEXT_DEFAULT_LOADER')) return;
  return emitWarning.call(this, warning, ...rest);
};

/**
 * Descriptors the host leaked to us without close-on-exec (anything but 0-4) would let user
 * code write to host pipes; Node's own descriptors are all close-on-exec, so close the rest.
 */
function closeInheritedFds() {
  for (const name of readdirSync('/proc/self/fd')) {
    const fd = Number(name);
    if (fd <= FRAMES_OUT) continue;
    try {
      const flags = /flags:\s+(\d+)/.exec(readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8'));
      if (flags && (parseInt(flags[1], 8) & 0o2000000) === 0) fs.closeSync(fd);
    } catch {
      // the directory's own descriptor, already gone
    }
  }
}
closeInheritedFds();

codeMode.installGlobals();
Object.defineProperty(globalThis, 'sandgate', { value: images.api, writable: true, configurable: true, enumerable: false });
for (const name of ['returnImage', 'returnContent']) Object.defineProperty(globalThis, name, { value: images[name], writable: true, configurable: true, enumerable: false });

const input = new (require('net').Socket)({ fd: FRAMES_IN, readable: true, writable: false });
input.on('data', onData);
input.on('end', onInputEnd);
input.on('error', onInputEnd);

sendFrame({ type: 'ready', language: 'javascript', pid: process.pid });

// Build the stdio streams while the runner waits in the pool instead of during the first call.
setImmediate(() => {
  process.stdout.on('error', () => {});
  process.stderr.on('error', () => {});
});
