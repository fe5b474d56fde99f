// V8's report when Node runs out of heap: GC traces, a JS stack header and a native stack naming
// the node binary's host path. The one line that says what happened is kept; the rest is noise.

/** Lines of V8's out-of-memory report besides its FATAL ERROR line. */
const REPORT_LINE = [
  /^\s*$/,
  /^<--- .* --->$/,
  /^\[\d+:0x[0-9a-f]+\]/, // GC trace: [pid:isolate] ms: Mark-Compact ...
  /^----- Native stack trace -----$/,
  /^\s*\d+: 0x[0-9a-f]+ /, // native frame: " 1: 0xb78db3 node::OOMErrorHandler(...) [/usr/bin/node]"
];
const MARKERS = ["<--- Last few GCs --->", "<--- JS stacktrace --->", "FATAL ERROR: "];

/**
 * `stderr` with V8's out-of-memory report reduced to its FATAL ERROR line; what the code itself
 * wrote stays. Text without such a report is returned as it is.
 */
export function trimV8FatalReport(stderr: string): string {
  const starts = MARKERS.map((marker) => stderr.indexOf(marker)).filter((at) => at >= 0);
  if (starts.length === 0 || !stderr.includes("FATAL ERROR: ")) return stderr;
  const start = stderr.lastIndexOf("\n", Math.min(...starts)) + 1;
  const kept = stderr
    .slice(start)
    .split("\n")
    .filter((line) => line.startsWith("FATAL ERROR: ") || !REPORT_LINE.some((pattern) => pattern.test(line)));
  const before = stderr.slice(0, start).replace(/\n+$/, "");
  return [...(before ? [before] : []), ...kept].join("\n") + "\n";
}
