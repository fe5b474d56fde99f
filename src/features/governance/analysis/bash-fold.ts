// Constant folding of small pipelines: what `echo X | base64 -d`, `printf '\x63...'`, `rev <<< ...`
// or `xxd -r -p` print when their input is written in the program, so hidden code can be analysed.

import type { Command } from "./bash-context.js";
import { decodeEscapes } from "./bash-words.js";
import { charge, charged, join, reverse } from "./fold-budget.js";

export interface Folded {
  value: string;
  /** A decoding step (base64, hex, rev, rot13, printf escapes) produced the value. */
  decoded: boolean;
}

function looksLikeText(text: string): boolean {
  if (text.length === 0) return false;
  let printable = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if ((code >= 32 && code < 127) || code === 9 || code === 10 || code === 13) printable++;
  }
  return printable / text.length > 0.9;
}

function rot13(text: string): string {
  return text.replace(/[A-Za-z]/g, (c) => {
    const base = c <= "Z" ? 65 : 97;
    return String.fromCharCode(((c.charCodeAt(0) - base + 13) % 26) + base);
  });
}

function values(command: Command): string[] | undefined {
  const out: string[] = [];
  for (const arg of command.args) {
    if (arg.value === undefined) return undefined;
    out.push(arg.value);
  }
  return out;
}

function printf(args: string[]): string {
  const [format = "", ...rest] = args;
  let index = 0;
  const body = format.replace(/%([-0-9.]*)([sbdcx%])/g, (_, _width: string, kind: string) => {
    if (kind === "%") return "%";
    const value = rest[index++] ?? "";
    return kind === "b" ? decodeEscapes(value, true) : value;
  });
  return decodeEscapes(body);
}

/** What one command prints given `input`, or undefined when that is not known statically. */
function step(command: Command, input: string | undefined): { value: string; decoded: boolean } | undefined {
  const args = values(command);
  if (!args) return undefined;
  const stdin = command.stdinText ?? input;
  const flags = args.filter((arg) => arg.startsWith("-"));
  switch (command.name ?? "") {
    case "echo": {
      let i = 0;
      let escapes = false;
      let newline = true;
      while (i < args.length && /^-[neE]+$/.test(args[i] as string)) {
        if ((args[i] as string).includes("e")) escapes = true;
        if ((args[i] as string).includes("n")) newline = false;
        i++;
      }
      const text = join(args.slice(i), " ");
      const value = escapes ? decodeEscapes(text, true) : text;
      return { value: value + (newline ? "\n" : ""), decoded: escapes && value !== text };
    }
    case "printf": {
      const value = charged(printf(args));
      return { value, decoded: /\\(x|[0-7])/.test(args[0] ?? "") };
    }
    case "cat":
      return args.length === 0 && stdin !== undefined ? { value: stdin, decoded: false } : undefined;
    case "base64":
    case "openssl": {
      if (!flags.some((flag) => /^-(d|D|-decode)$|^-[a-z]*d/.test(flag)) || stdin === undefined) return undefined;
      if (command.name === "openssl" && !args.includes("base64") && !args.includes("-a") && !args.includes("-base64")) return undefined;
      const decoded = Buffer.from(stdin.replace(/\s+/g, ""), "base64").toString("latin1");
      return looksLikeText(decoded) ? { value: decoded, decoded: true } : undefined;
    }
    case "xxd": {
      if (!flags.some((flag) => flag.includes("r")) || stdin === undefined) return undefined;
      const hex = stdin.replace(/[^0-9a-fA-F]/g, "");
      const decoded = Buffer.from(hex, "hex").toString("latin1");
      return looksLikeText(decoded) ? { value: decoded, decoded: true } : undefined;
    }
    case "rev":
      return stdin === undefined ? undefined : { value: stdin.split("\n").map(reverse).join("\n"), decoded: true };
    case "tr": {
      if (stdin === undefined || args.length !== 2) return undefined;
      const [from = "", to = ""] = args;
      if (/^(A-Z)?a-z(A-Z)?$|^A-Za-z$|^a-zA-Z$/.test(from) && /N-Z|n-z/.test(to)) return { value: rot13(stdin), decoded: true };
      return undefined;
    }
    case "which":
      return args.length === 1 ? { value: args[0] as string, decoded: false } : undefined;
    case "command":
      return args.length === 2 && args[0] === "-v" ? { value: args[1] as string, decoded: false } : undefined;
    default:
      return undefined;
  }
}

/** Folds the stages of a pipeline (each given by its commands) into the text they print. */
export function foldStages(stages: readonly (readonly Command[] | undefined)[]): Folded | undefined {
  let value: string | undefined;
  let decoded = false;
  for (const commands of stages) {
    if (!commands || commands.length !== 1) return undefined;
    const result = step(commands[0] as Command, value);
    if (!result) return undefined;
    charge(result.value.length);
    value = result.value;
    decoded ||= result.decoded;
  }
  return value === undefined ? undefined : { value, decoded };
}
