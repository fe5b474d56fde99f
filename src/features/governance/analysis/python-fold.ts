// Constant folding for Python values: string escapes, decoders whose literal input can be decoded
// here (base64, hex, rot13), str methods, and the call tables that mark data as remote or identifying.

import { charged, concat, replaceAll } from "./fold-budget.js";
import type { Val } from "./python-values.js";

export function unescape(text: string): string {
  if (!text.includes("\\")) return text;
  return text.replace(/\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|[0-7]{1,3}|\n|.)/g, (_m, e: string) => {
    const c = e[0] ?? "";
    if (c === "x" || c === "u" || c === "U") {
      const code = parseInt(e.slice(1), 16);
      return code <= 0x10ffff ? String.fromCodePoint(code) : "";
    }
    if (c >= "0" && c <= "7") return String.fromCharCode(parseInt(e, 8));
    switch (c) {
      case "n": return "\n";
      case "t": return "\t";
      case "r": return "\r";
      case "\n": return "";
      default: return e;
    }
  });
}

export const DECODERS = new Set([
  "base64.b64decode", "base64.b32decode", "base64.b16decode", "base64.a85decode", "base64.b85decode", "base64.decodebytes",
  "base64.decodestring", "base64.urlsafe_b64decode", "base64.standard_b64decode", "binascii.unhexlify", "binascii.a2b_hex",
  "binascii.a2b_base64", "bytes.fromhex", "bytearray.fromhex", "zlib.decompress", "gzip.decompress", "bz2.decompress",
  "lzma.decompress", "marshal.loads", "codecs.decode", "binascii.a2b_uu",
]);

export function decodeLiteral(fn: string, s: string, arg2: string | undefined): string | undefined {
  try {
    if (fn === "base64.b64decode" || fn === "base64.decodebytes" || fn === "base64.standard_b64decode" || fn === "base64.decodestring")
      return Buffer.from(s, "base64").toString("latin1");
    if (fn === "base64.urlsafe_b64decode") return Buffer.from(s, "base64url").toString("latin1");
    if (fn === "bytes.fromhex" || fn === "bytearray.fromhex" || fn === "binascii.unhexlify" || fn === "binascii.a2b_hex" || fn === "base64.b16decode")
      return Buffer.from(s.replace(/\s+/g, ""), "hex").toString("latin1");
    if (fn === "codecs.decode" && arg2 !== undefined) {
      const enc = arg2.toLowerCase().replace(/[-_]/g, "");
      if (enc === "rot13") return s.replace(/[a-zA-Z]/g, (c) => String.fromCharCode(((c.toLowerCase().charCodeAt(0) - 97 + 13) % 26) + (c <= "Z" ? 65 : 97)));
      if (enc === "hex") return Buffer.from(s, "hex").toString("latin1");
      if (enc === "base64") return Buffer.from(s, "base64").toString("latin1");
    }
  } catch {
    return undefined;
  }
  return undefined;
}

/** Calls whose result is data from the network. */
export const REMOTE_CALL =
  /^(requests|httpx)\.(get|post|request|put|patch)$|^(requests\.Session|httpx\.Client|httpx\.AsyncClient|aiohttp\.ClientSession|urllib3\.PoolManager)\(\)\.(get|post|request|put|patch)$|^urllib\.request\.urlopen$|^urllib\.urlopen$|^socket\.(socket|create_connection)\(\)\.(recv|recvfrom|recv_into|makefile)$|^http\.client\.HTTPS?Connection\(\)\.getresponse$/;

/** Calls that say who and where the host is (GuardDog counts sending them as exfiltration). */
export const HOST_IDENTITY = new Set(["socket.gethostname", "getpass.getuser", "os.getlogin", "platform.node", "platform.uname", "uuid.getnode", "os.uname"]);

/** Methods of str/bytes that keep the (taint of the) receiver and fold when the receiver is constant. */
export const STRING_METHODS: Record<string, (s: string, args: Val[]) => string | undefined> = {
  decode: (s) => s,
  encode: (s) => s,
  strip: (s) => s.trim(),
  lower: (s) => charged(s.toLowerCase()),
  upper: (s) => charged(s.toUpperCase()),
  replace: (s, a) => (a[0]?.s !== undefined && a[1]?.s !== undefined ? replaceAll(s, a[0].s, a[1].s) : undefined),
  format: (s, a) => {
    // Split around the fields and joined by concat(): "{}{}".format(x, x) doubles x.
    const pieces = s.split(/\{[^{}]*\}/g);
    const parts: string[] = [pieces[0] ?? ""];
    for (let i = 1; i < pieces.length; i++) {
      const v = a[i - 1]?.s;
      if (v === undefined) return undefined;
      parts.push(v, pieces[i] ?? "");
    }
    return concat(parts);
  },
};
