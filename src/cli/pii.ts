// `sandgate pii`: text on standard input, the same text with personal data replaced by tokens on
// standard output (--json: the text and its entities), for checking what a PII policy catches.

import { once } from "node:events";
import type { SandgateConfig } from "../config/index.js";
import { SandgateError } from "../errors/index.js";
import { PiiVault, scanOptions, type DetectOptions } from "../features/pii/index.js";
import type { CliIo } from "./io.js";

export interface PiiArgs {
  json?: boolean;
  types?: string;
}

/** The most standard input this command holds at once: the whole text with --json, else one line (bytes; characters for a line). */
export const MAX_PII_INPUT_BYTES = 64 * 1024 * 1024;

export async function runPii(args: PiiArgs, config: SandgateConfig, io: CliIo): Promise<number> {
  const types = args.types === undefined ? undefined : args.types.split(",").map((t) => t.trim()).filter((t) => t !== "");
  if (types !== undefined && types.length === 0) throw new SandgateError("INVALID_INPUT", "--types needs a comma-separated list of kinds, e.g. --types email,phone");
  const options = scanOptions(config.pii, types);
  if (io.stdin.isTTY) throw new SandgateError("INVALID_INPUT", "give the text on standard input, e.g. sandgate pii < notes.txt");
  const vault = new PiiVault();
  if (args.json) {
    const text = await readAll(io);
    const { text: out, entities } = vault.tokenize(text, options);
    await write(io, `${JSON.stringify({ text: out, entities })}\n`);
    return 0;
  }
  await streamLines(io, vault, options);
  return 0;
}

async function readAll(io: CliIo): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const read of io.stdin) {
    const chunk = typeof read === "string" ? Buffer.from(read) : read;
    size += chunk.length;
    if (size > MAX_PII_INPUT_BYTES) throw tooLarge("the input");
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * The whole lines of each read (at most a pipe's buffer, so `tail -f log | sandgate pii` shows a line
 * as it comes), one vault for the whole input: a value keeps its token from line to line.
 */
async function streamLines(io: CliIo, vault: PiiVault, options: DetectOptions): Promise<void> {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  for await (const read of io.stdin) {
    const chunk = typeof read === "string" ? Buffer.from(read) : read;
    // A newline byte is never part of a longer UTF-8 character: cutting there keeps characters whole.
    const cut = chunk.lastIndexOf(0x0a);
    if (cut === -1) {
      pending.push(chunk);
      pendingBytes += chunk.length;
      if (pendingBytes > MAX_PII_INPUT_BYTES) throw tooLarge("a line of the input");
      continue;
    }
    await writeTokenized(io, vault, options, Buffer.concat([...pending, chunk.subarray(0, cut + 1)]));
    pending = [chunk.subarray(cut + 1)];
    pendingBytes = pending[0]?.length ?? 0;
  }
  if (pendingBytes > 0) await writeTokenized(io, vault, options, Buffer.concat(pending));
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/** Lines that are not UTF-8 (a Latin-1 or Windows-1252 export) are read and written byte for byte as Latin-1: only the values found change. */
async function writeTokenized(io: CliIo, vault: PiiVault, options: DetectOptions, bytes: Buffer): Promise<void> {
  let text: string;
  try {
    text = strictUtf8.decode(bytes);
  } catch {
    const out = vault.tokenize(bytes.toString("latin1"), options).text;
    if (!io.stdout.write(Buffer.from(out, "latin1"))) await once(io.stdout, "drain");
    return;
  }
  await write(io, vault.tokenize(text, options).text);
}

function tooLarge(what: string): SandgateError {
  return new SandgateError("INVALID_INPUT", `${what} is larger than ${MAX_PII_INPUT_BYTES / 1024 / 1024} MiB; split it${what === "the input" ? ", or leave out --json to stream it line by line" : " into lines"}`);
}

async function write(io: CliIo, text: string): Promise<void> {
  if (!io.stdout.write(text)) await once(io.stdout, "drain");
}
