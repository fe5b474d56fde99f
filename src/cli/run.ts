// The `sandgate` command as a function: parses argv, dispatches to the commands, and turns errors
// into one clear line on stderr and an exit status. It reads and writes only `io` (see io.ts), not
// the process, except `serve` and `stdio`, which live as long as the process and answer its signals.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { CONFIG_FILE_NAME, loadConfig, locateConfigFile, TOOL_PROFILES, type SandgateConfig } from "../config/index.js";
import { isSandgateError, SandgateError } from "../errors/index.js";
import { runAnalyze } from "./analyze.js";
import { runAudit } from "./audit.js";
import { runCall } from "./call.js";
import { runConfig } from "./config.js";
import { runDoctor } from "./doctor.js";
import { runExec } from "./exec.js";
import { commandHelp, HELP } from "./help.js";
import type { CliIo } from "./io.js";
import { runPackages } from "./packages.js";
import { runPii } from "./pii.js";
import { runServe, runStdio } from "./serve.js";
import { runTools } from "./tools.js";

export type { CliIo } from "./io.js";

function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };
  return pkg.version;
}

/** Pulls --config FILE out of argv; locateConfigFile falls back to SANDGATE_CONFIG, then ./sandgate.json. */
function takeConfigFlag(argv: string[], io: CliIo): { configPath: string | undefined; args: string[] } {
  const args: string[] = [];
  let configPath: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? "";
    if (arg === "--config") {
      configPath = argv[++i];
      if (configPath === undefined) throw new SandgateError("CONFIG_INVALID", "--config needs a file name");
    } else if (arg.startsWith("--config=")) configPath = arg.slice("--config=".length);
    else args.push(arg);
  }
  const located = locateConfigFile({ ...(configPath === undefined ? {} : { configPath }), env: io.env, cwd: io.cwd });
  // Found in the working directory: named as the user would type it (messages, `config --print`).
  return { configPath: configPath === undefined && located === join(io.cwd, CONFIG_FILE_NAME) ? CONFIG_FILE_NAME : located, args };
}

/** The config with --tools PROFILE over server.toolProfile (SANDGATE_TOOLS). */
function withToolProfile(config: SandgateConfig, tools: string | undefined): SandgateConfig {
  if (tools === undefined) return config;
  const profile = TOOL_PROFILES.find((p) => p === tools);
  if (profile === undefined) throw new SandgateError("CONFIG_INVALID", `--tools ${tools} is not a tool profile; use ${TOOL_PROFILES.join(" or ")}`);
  return { ...config, server: { ...config.server, toolProfile: profile } };
}

async function dispatch(argv: string[], io: CliIo): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === "help" || command === "--help" || command === "-h") {
    io.stdout.write(HELP);
    return command === undefined ? 2 : 0;
  }
  if (command === "--version" || command === "version") {
    io.stdout.write(`${packageVersion()}\n`);
    return 0;
  }
  // `sandgate call` reads its own flags (an operation's fields) and gives each operation's help itself.
  if (command === "call") {
    const { configPath, args } = takeConfigFlag(rest, io);
    return runCall(args, () => loadConfig(io.env, { ...(configPath === undefined ? {} : { configPath }), cwd: io.cwd }), io, packageVersion());
  }
  // `sandgate exec --help`, `sandgate packages sync -h`: the usage, not an unknown-option error.
  // Only before a `--`, so code passed after it may say --help.
  const beforeDashes = rest.indexOf("--") === -1 ? rest : rest.slice(0, rest.indexOf("--"));
  if (beforeDashes.includes("--help") || beforeDashes.includes("-h")) {
    io.stdout.write(commandHelp(command) ?? HELP);
    return 0;
  }
  const { configPath, args } = takeConfigFlag(rest, io);
  const config = (): SandgateConfig => loadConfig(io.env, { ...(configPath === undefined ? {} : { configPath }), cwd: io.cwd });
  switch (command) {
    case "serve": {
      const { values } = parseArgs({ args, options: { host: { type: "string" }, port: { type: "string" }, tools: { type: "string" } } });
      const base = withToolProfile(config(), values.tools);
      const port = values.port === undefined ? base.server.port : Number(values.port);
      if (!Number.isInteger(port) || port < 0 || port > 65535) throw new SandgateError("CONFIG_INVALID", `--port ${values.port ?? ""} is not a port number (0-65535)`);
      return runServe({ ...base, server: { ...base.server, port, ...(values.host ? { host: values.host } : {}) } }, packageVersion());
    }
    case "stdio": {
      const { values } = parseArgs({ args, options: { tools: { type: "string" } } });
      return runStdio(withToolProfile(config(), values.tools), packageVersion());
    }
    case "config": {
      const { values } = parseArgs({ args, options: { print: { type: "boolean" }, schema: { type: "boolean" } } });
      return runConfig(values.schema ? "schema" : "print", values.schema ? undefined : config(), configPath, io);
    }
    case "exec": {
      const { values, positionals } = parseArgs({
        args,
        allowPositionals: true,
        options: {
          language: { type: "string", short: "l" },
          file: { type: "string", short: "f" },
          timeout: { type: "string", short: "t" },
          memory: { type: "string", short: "m" },
          flavor: { type: "string" },
          env: { type: "string", short: "e", multiple: true },
          json: { type: "boolean" },
          images: { type: "string" },
        },
      });
      return runExec({ ...values, ...(positionals.length > 0 ? { code: positionals.join(" ") } : {}) }, config(), io);
    }
    case "analyze": {
      const { values, positionals } = parseArgs({
        args,
        allowPositionals: true,
        options: { language: { type: "string", short: "l" }, file: { type: "string", short: "f" }, json: { type: "boolean" } },
      });
      return runAnalyze({ ...values, ...(positionals.length > 0 ? { code: positionals.join(" ") } : {}) }, config(), io);
    }
    case "audit": {
      const { values, positionals } = parseArgs({
        args,
        allowPositionals: true,
        options: {
          since: { type: "string" },
          until: { type: "string" },
          session: { type: "string" },
          client: { type: "string" },
          status: { type: "string" },
          language: { type: "string" },
          tool: { type: "string" },
          kind: { type: "string" },
          "min-risk": { type: "string" },
          limit: { type: "string" },
          cursor: { type: "string" },
          json: { type: "boolean" },
          jsonl: { type: "boolean" },
        },
      });
      const { "min-risk": minRisk, ...rest } = values;
      if (positionals.length > 1) throw new SandgateError("INVALID_INPUT", `sandgate audit takes one action (verify or export), not ${positionals.join(" ")}`);
      return runAudit({ ...rest, ...(minRisk !== undefined ? { minRisk } : {}), ...(positionals[0] !== undefined ? { action: positionals[0] } : {}) }, config(), io);
    }
    case "doctor": {
      const { values } = parseArgs({ args, options: { json: { type: "boolean" } } });
      return runDoctor(config(), values.json ?? false, io);
    }
    case "packages": {
      const { values, positionals } = parseArgs({
        args,
        allowPositionals: true,
        options: { json: { type: "boolean" }, apt: { type: "boolean" }, "find-links": { type: "string", multiple: true }, "no-index": { type: "boolean" } },
      });
      return runPackages(
        { action: positionals[0], extra: positionals.slice(1), json: values.json ?? false, apt: values.apt ?? false, findLinks: values["find-links"] ?? [], noIndex: values["no-index"] ?? false },
        config(),
        io,
      );
    }
    case "pii": {
      const { values } = parseArgs({ args, options: { json: { type: "boolean" }, types: { type: "string" } } });
      return runPii(values, config(), io);
    }
    case "tools": {
      const { values } = parseArgs({
        args,
        options: {
          search: { type: "string", short: "s" },
          detail: { type: "string" },
          limit: { type: "string" },
          server: { type: "string" },
          show: { type: "string" },
          tree: { type: "boolean" },
          json: { type: "boolean" },
        },
      });
      return runTools(values, config(), io);
    }
    default:
      io.stderr.write(`sandgate: unknown command ${JSON.stringify(command)}\n\n${HELP}`);
      return 2;
  }
}

function isParseArgsError(error: unknown): error is TypeError {
  return error instanceof TypeError && "code" in error && String(error.code).startsWith("ERR_PARSE_ARGS");
}

/**
 * Runs `sandgate ...argv` against `io` and resolves with its exit status. A failure becomes one line on
 * stderr: 2 for bad input (a SandgateError, an unknown or malformed option), 70 for a failure of sandgate.
 */
export async function main(argv: string[], io: CliIo): Promise<number> {
  try {
    return await dispatch(argv, io);
  } catch (error) {
    if (isSandgateError(error)) io.stderr.write(`sandgate: ${error.message} [${error.code}]\n`);
    else if (isParseArgsError(error)) io.stderr.write(`sandgate: ${error.message} (see sandgate --help)\n`);
    else io.stderr.write(`sandgate: unexpected failure: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    return isSandgateError(error) || isParseArgsError(error) ? 2 : 70;
  }
}
