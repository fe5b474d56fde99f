// `sandgate exec`: runs one snippet in a fresh sandbox, streams its output, and exits with a
// code that mirrors the result (the program's own exit code, 124 on timeout, 137 when killed).

import { basename, join } from "node:path";
import type { SandgateConfig } from "../config/index.js";
import { publicError, SandgateError } from "../errors/index.js";
import { describeLanguages, languageForFile } from "../languages/index.js";
import { parseSavedOutputUri, type ExecutionResult } from "../execution/index.js";
import { securityLine, toWireResult } from "../server/index.js";
import { readCode } from "./code-input.js";
import { prepareImagesDir, saveImages } from "./exec-images.js";
import { inCwd, type CliIo } from "./io.js";
import { terminalApp } from "./terminal-app.js";

export interface ExecArgs {
  language?: string;
  file?: string;
  code?: string;
  timeout?: string;
  memory?: string;
  flavor?: string;
  /** NAME=VALUE pairs, the code's environment variables. */
  env?: string[];
  json?: boolean;
  /** Directory the call's images are saved in. */
  images?: string;
}

export const EXIT_FOR_STATUS: Record<ExecutionResult["status"], number | undefined> = {
  ok: 0,
  error: undefined,
  timeout: 124,
  memory_limit: 137,
  output_limit: 125,
  killed: 137,
};

function parsePositive(name: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new SandgateError("INVALID_INPUT", `--${name} must be a positive number, got ${JSON.stringify(raw)}`);
  return value;
}

/** --env NAME=VALUE pairs as variables; the engine checks the names. */
function parseEnv(pairs: string[] | undefined): Record<string, string> | undefined {
  if (!pairs || pairs.length === 0) return undefined;
  const entries = pairs.map((pair) => {
    const at = pair.indexOf("=");
    if (at <= 0) throw new SandgateError("INVALID_INPUT", "--env takes NAME=VALUE (the host's own variables never reach the code)", { data: { field: "env" } });
    return [pair.slice(0, at), pair.slice(at + 1)] as const;
  });
  // fromEntries, not assignment: a `__proto__` name stays a key and is refused by the check.
  return Object.fromEntries(entries);
}

/** Saves the images to `dir` when given, and says on stderr what came back (and what was dropped). */
function reportImages(result: ExecutionResult, dir: string | undefined, io: CliIo): void {
  const images = result.images ?? [];
  if (images.length > 0) {
    let files: string[] = [];
    try {
      if (dir !== undefined) files = saveImages(images, inCwd(io, dir)).map((file) => join(dir, basename(file)));
    } catch (error) {
      // The run's output and status still come out; only the files are missing (a full disk, the directory removed).
      io.stderr.write(`sandgate: could not save the images in ${dir}: ${(error as NodeJS.ErrnoException).code ?? String(error)}\n`);
    }
    images.forEach((image, i) => {
      const size = Math.ceil(Buffer.byteLength(image.dataBase64, "base64") / 1024);
      io.stderr.write(`sandgate: image ${i + 1}: ${image.mime}, ${size} KiB${files[i] ? `, saved as ${files[i]}` : " (pass --images DIR to save it)"}\n`);
    });
  }
  if (result.imagesNote) io.stderr.write(`sandgate: ${result.imagesNote}\n`);
}

export async function runExec(args: ExecArgs, config: SandgateConfig, io: CliIo): Promise<number> {
  const code = await readCode(args, io);
  // An unknown --language is refused by the engine, naming the languages and their aliases.
  const language = args.language ?? (args.file !== undefined ? languageForFile(args.file) : undefined);
  if (!language) {
    throw new SandgateError(
      "INVALID_INPUT",
      `say which language with --language: ${describeLanguages()}${args.file !== undefined ? ` (the extension of ${args.file} names none)` : ""}`,
    );
  }

  // Upstream servers are connected only when configured: plain runs pay nothing for code mode.
  // Analysis and the code policy apply here as on the server: a blocked snippet does not run. Nobody
  // can approve at a terminal, so what needs approval (code, or a tool call under toolPolicy) is refused
  // at once (APPROVAL_DENIED, ToolDenied); events go nowhere (no audit log, no observers).
  const app = terminalApp(config, io, "nobody can approve at a terminal (sandgate exec); run it through sandgate serve");
  const { engine, log } = app;
  const closeAll = (): Promise<unknown> => app.close();
  const withdraw = io.onInterrupt?.(closeAll);
  try {
    const timeoutS = parsePositive("timeout", args.timeout);
    const memoryMb = parsePositive("memory", args.memory);
    const env = parseEnv(args.env);
    if (args.images !== undefined) prepareImagesDir(inCwd(io, args.images));
    await app.start();
    const result = await engine.execute({
      code,
      language,
      ...(timeoutS !== undefined ? { timeoutS } : {}),
      ...(memoryMb !== undefined ? { memoryMb } : {}),
      ...(env ? { env } : {}),
      ...(args.flavor !== undefined ? { flavor: args.flavor as "small" } : {}),
      ...(args.json ? {} : { onOutput: (stream, text) => void (stream === "stdout" ? io.stdout : io.stderr).write(text) }),
    });
    reportImages(result, args.images, io);
    const wire = toWireResult(result);
    if (!args.json) {
      const security = securityLine(wire.security);
      if (security) io.stderr.write(`sandgate: ${security.slice(1, -1)}\n`);
    }
    if (args.json) {
      // The same snake_case object the REST API and the MCP tools return.
      io.stdout.write(`${JSON.stringify(wire, null, 2)}\n`);
    } else {
      if (result.value !== undefined) io.stdout.write(`${typeof result.value === "string" ? result.value : JSON.stringify(result.value)}\n`);
      // A shell's non-zero status is already told by the exit code; anything else gets its traceback.
      if (result.error && result.error.type !== "ExitStatus") io.stderr.write(`${result.error.traceback || `${result.error.type}: ${result.error.message}`}\n`);
      if (result.fullOutput) {
        // The person at this terminal owns SANDBOX_DIR: name the files too, not only the server's resource URIs.
        const files = Object.values(result.fullOutput).map((uri) => {
          const saved = parseSavedOutputUri(uri);
          return saved ? `${uri} (${join(engine.runtime.outputsDir, saved.id, saved.stream)})` : uri;
        });
        io.stderr.write(`sandgate: full output kept as ${files.join(" and ")}\n`);
      }
    }
    return EXIT_FOR_STATUS[result.status] ?? (result.exitCode && result.exitCode > 0 ? result.exitCode : 1);
  } catch (error) {
    // Scrubbed while the engine's host paths are still known; an unexpected failure is logged in full.
    throw publicError(error, log);
  } finally {
    withdraw?.();
    await closeAll();
  }
}
