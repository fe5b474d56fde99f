// Media types of workspace files, guessed from the extension only (never sniffed from content),
// and which of them a browser could render as active content.

const TYPES: Record<string, string> = {
  txt: "text/plain; charset=utf-8",
  log: "text/plain; charset=utf-8",
  md: "text/markdown; charset=utf-8",
  csv: "text/csv; charset=utf-8",
  tsv: "text/tab-separated-values; charset=utf-8",
  json: "application/json",
  jsonl: "application/x-ndjson",
  py: "text/x-python; charset=utf-8",
  ts: "text/plain; charset=utf-8",
  sh: "text/x-shellscript; charset=utf-8",
  yaml: "application/yaml",
  yml: "application/yaml",
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
  bmp: "image/bmp",
  svg: "image/svg+xml",
  pdf: "application/pdf",
  html: "text/html; charset=utf-8",
  htm: "text/html; charset=utf-8",
  xml: "application/xml",
  js: "text/javascript; charset=utf-8",
  mjs: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
  zip: "application/zip",
  gz: "application/gzip",
  tar: "application/x-tar",
  parquet: "application/vnd.apache.parquet",
  npy: "application/octet-stream",
  wasm: "application/wasm",
  mp3: "audio/mpeg",
  wav: "audio/wav",
  mp4: "video/mp4",
};

/** Types a browser shows inline without running anything; every other one is sent as an attachment. */
const PASSIVE = new Set(["text/plain", "text/csv", "text/markdown", "text/tab-separated-values", "application/json", "image/png", "image/jpeg", "image/gif", "image/webp", "image/bmp"]);

/** The type of a file named `path`, from its extension; application/octet-stream when unknown. */
export function mimeTypeOf(path: string): string {
  const name = path.slice(path.lastIndexOf("/") + 1);
  const dot = name.lastIndexOf(".");
  return (dot > 0 && TYPES[name.slice(dot + 1).toLowerCase()]) || "application/octet-stream";
}

/** Whether a browser may show a file of this type inline (no scripts, no markup). */
export function isPassiveType(type: string): boolean {
  return PASSIVE.has(type.split(";")[0]?.trim() ?? "");
}
