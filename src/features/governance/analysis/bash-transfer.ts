// What a download or upload command does, from its options: curl, wget and their kin. Where the
// body goes (stdout or a file), what it sends (data, files, stdin), and whether TLS checks are off.

import type { Command } from "./bash-context.js";
import { baseName, type Word } from "./bash-words.js";

export interface Transfer {
  urls: Word[];
  /** The response body goes to standard output. */
  toStdout: boolean;
  /** The file the body is saved to (basename when taken from the URL). */
  file: string | undefined;
  /** Data, files or stdin sent in the request. */
  sends: boolean;
  /** Words whose value is sent (`-d "$x"`, `-F f=@file`, URL queries with expansions). */
  sent: Word[];
  /** Local files uploaded (`-F f=@path`, `-T path`, `--post-file=path`). */
  files: string[];
  insecure: boolean;
}

const CURL_SHORT_VALUE = new Set("AbcCdDeEFHKmoPQrtTuUwxXyYz");
const CURL_LONG_VALUE = new Set(
  "data data-binary data-raw data-urlencode data-ascii json form form-string upload-file output output-dir header user user-agent request url max-time connect-timeout retry retry-delay retry-max-time cookie cookie-jar cacert capath cert key proxy referer write-out resolve limit-rate range interface dns-servers config dump-header continue-at max-filesize oauth2-bearer proto proto-redir unix-socket netrc-file trace trace-ascii stderr create-file-mode expect100-timeout keepalive-time local-port max-redirs noproxy pinnedpubkey variable aws-sigv4 ciphers connect-to socks5 socks5-hostname speed-limit speed-time tls-max url-query proxy-user"
    .split(" "),
);
const CURL_SEND = new Set(["d", "F", "T", "data", "data-binary", "data-raw", "data-urlencode", "data-ascii", "json", "form", "form-string", "upload-file"]);

function urlFile(url: string | undefined): string | undefined {
  if (!url) return undefined;
  const path = url.replace(/[?#].*$/, "").replace(/^[a-z]+:\/\/[^/]*/i, "");
  const base = baseName(path);
  return base || "index.html";
}

function uploadPath(option: string, value: string): string | undefined {
  if (option === "T" || option === "upload-file") return value;
  const at = /(?:^|=)@([^;]+)/.exec(value) ?? /^<(.+)$/.exec(value);
  return at?.[1];
}

/** How one tool spells its options: which take a value, and what its flags without a value mean. */
interface OptionGrammar {
  longTakesValue(option: string): boolean;
  shortTakesValue: ReadonlySet<string>;
  /** A flag (long name or short letter) that takes no value. */
  flag?(option: string): void;
  take(option: string, value: Word | undefined): void;
}

/** Walks a download tool's arguments: --long[=value], clustered -abc short flags and -ovalue, the rest URLs. */
function readOptions(args: readonly Word[], grammar: OptionGrammar, urls: Word[]): void {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as Word;
    const value = arg.value;
    if (value === undefined) {
      urls.push(arg);
      continue;
    }
    if (value.startsWith("--")) {
      const eq = value.indexOf("=");
      const option = value.slice(2, eq < 0 ? undefined : eq);
      grammar.flag?.(option);
      if (eq >= 0) grammar.take(option, { ...arg, value: value.slice(eq + 1) });
      else if (grammar.longTakesValue(option)) grammar.take(option, args[++i]);
      continue;
    }
    if (value.startsWith("-") && value.length > 1) {
      for (let j = 1; j < value.length; j++) {
        const letter = value[j] as string;
        if (!grammar.shortTakesValue.has(letter)) {
          grammar.flag?.(letter);
          continue;
        }
        const rest = value.slice(j + 1);
        grammar.take(letter, rest ? { ...arg, value: rest } : args[++i]);
        break;
      }
      continue;
    }
    urls.push(arg);
  }
}

function curl(command: Command): Transfer {
  const transfer: Transfer = { urls: [], toStdout: true, file: undefined, sends: false, sent: [], files: [], insecure: false };
  let remoteName = false;
  readOptions(
    command.args,
    {
      longTakesValue: (option) => CURL_LONG_VALUE.has(option),
      shortTakesValue: CURL_SHORT_VALUE,
      flag(option) {
        if (option === "insecure" || option === "k") transfer.insecure = true;
        else if (option === "remote-name" || option === "remote-name-all" || option === "O") remoteName = true;
      },
      take(option, value) {
        const text = value?.value ?? "";
        if (option === "o" || option === "output") {
          transfer.toStdout = text === "-";
          transfer.file = text === "-" ? undefined : text || undefined;
        } else if (option === "X" || option === "request") {
          if (/^(POST|PUT|PATCH)$/i.test(text)) transfer.sends = true;
        } else if (option === "url" && value) transfer.urls.push(value);
        else if (CURL_SEND.has(option)) {
          transfer.sends = true;
          if (value) transfer.sent.push(value);
          const file = uploadPath(option, text);
          if (file) transfer.files.push(file);
        }
      },
    },
    transfer.urls,
  );
  if (remoteName && !transfer.file) {
    transfer.toStdout = false;
    transfer.file = urlFile(transfer.urls[0]?.value);
  }
  return transfer;
}

const WGET_SHORT_VALUE = new Set("OoaPUtTweiBQlARDXI");
const WGET_LONG_VALUE = /^(output-document|post-data|body-data|post-file|body-file|method|header|user-agent|directory-prefix|tries|timeout|user|password|input-file)$/;

function wget(command: Command): Transfer {
  const transfer: Transfer = { urls: [], toStdout: false, file: undefined, sends: false, sent: [], files: [], insecure: false };
  let output: string | undefined;
  readOptions(
    command.args,
    {
      longTakesValue: (option) => WGET_LONG_VALUE.test(option),
      shortTakesValue: WGET_SHORT_VALUE,
      flag(option) {
        if (option === "no-check-certificate") transfer.insecure = true;
      },
      take(option, value) {
        const text = value?.value ?? "";
        if (option === "O" || option === "output-document") output = text;
        else if (/^(post-data|body-data|post-file|body-file)$/.test(option)) {
          transfer.sends = true;
          if (value) transfer.sent.push(value);
          if (option.endsWith("file")) transfer.files.push(text);
        } else if (option === "method" && /^(POST|PUT|PATCH)$/i.test(text)) transfer.sends = true;
      },
    },
    transfer.urls,
  );
  if (output === "-" || output === "/dev/stdout") transfer.toStdout = true;
  else transfer.file = output || urlFile(transfer.urls[0]?.value);
  return transfer;
}

/** The transfer a command makes, or undefined when it is not a download/upload tool. */
export function transferOf(command: Command): Transfer | undefined {
  switch (command.name ?? "") {
    case "curl":
      return curl(command);
    case "wget":
    case "wget2":
      return wget(command);
    case "fetch":
    case "aria2c":
    case "axel":
    case "lwp-download": {
      const urls = command.args.filter((arg) => /^[a-z]+:\/\//i.test(arg.value ?? "") || arg.value === undefined);
      const outIndex = command.args.findIndex((arg) => arg.value === "-o" || arg.value === "-O");
      const file = outIndex >= 0 ? command.args[outIndex + 1]?.value : command.name === "lwp-download" ? command.args[1]?.value : urlFile(urls[0]?.value);
      return { urls, toStdout: file === "-", file: file === "-" ? undefined : file, sends: false, sent: [], files: [], insecure: false };
    }
    case "http":
    case "https":
    case "lynx":
    case "links":
    case "w3m": {
      const urls = command.args.filter((arg) => !(arg.value ?? "").startsWith("-"));
      const sends = command.name === "http" || command.name === "https" ? urls.some((arg) => /[=:]=?/.test(arg.value ?? "") && !/^[a-z]+:\/\//i.test(arg.value ?? "")) : false;
      return { urls, toStdout: true, file: undefined, sends, sent: sends ? urls : [], files: [], insecure: command.args.some((arg) => arg.value === "--verify=no") };
    }
    default:
      return undefined;
  }
}
