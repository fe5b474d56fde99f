// Text from the outside (paths and routes a client sent, strings in analysed code) made safe to
// print on a terminal: control characters and bidirectional overrides are shown as \u escapes,
// so that no one can recolour, retitle, rewrite or hide what an admin reads.

// C0 and C1 controls (newlines and tabs too: one row is one line), DEL, line separators and the
// bidirectional embeddings, overrides and isolates ("Trojan Source").
// eslint-disable-next-line no-control-regex
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

export function printable(text: string): string {
  return text.replace(UNPRINTABLE, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
