// Where `sandgate exec` and `sandgate analyze` get their code: the argument, -f FILE or standard
// input; a file that cannot be read, or no code at all, is bad input said in one line.

import { readFileSync } from "node:fs";
import { SandgateError } from "../errors/index.js";
import { inCwd, type CliIo } from "./io.js";

async function readStdin(stdin: CliIo["stdin"]): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks).toString("utf8");
}

/** The code of `-f FILE` (from the command's working directory when relative). */
export function readCodeFile(file: string, io: Pick<CliIo, "cwd">): string {
  try {
    return readFileSync(inCwd(io, file), "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === "ENOENT" ? "no such file" : code === "EISDIR" ? "it is a directory" : code === "EACCES" ? "permission denied" : (code ?? String(error));
    throw new SandgateError("INVALID_INPUT", `-f ${file}: ${why}`);
  }
}

/** The code from -f FILE, the CODE argument, or stdin when it is not a terminal. */
export async function readCode(args: { file?: string | undefined; code?: string | undefined }, io: CliIo): Promise<string> {
  if (args.file !== undefined) return readCodeFile(args.file, io);
  if (args.code !== undefined) return args.code;
  if (!io.stdin.isTTY) return readStdin(io.stdin);
  throw new SandgateError("CODE_EMPTY", "no code given: pass it as an argument, with -f FILE, or on standard input");
}
