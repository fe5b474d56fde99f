// Strings a vault keeps for as long as its session: copies of their own, never slices, since V8 keeps
// the whole text a slice was cut from alive (a 10 MB tool result for one email in it).

/** `value` as a new string that holds nothing else alive (one byte per character where it can). */
export function ownString(value: string): string {
  const encoding = /[\u0100-\uffff]/.test(value) ? "utf16le" : "latin1";
  return Buffer.from(value, encoding).toString(encoding);
}
