// Small helpers every benchmark part uses: percentiles, millisecond formatting, sleeping.

/** The p-th percentile (0-100) of `xs`, by nearest rank. */
export const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};

/** Milliseconds with `digits` decimals below 10 ms, one decimal above. */
export const fmt = (ms, digits = 2) => (ms < 10 ? ms.toFixed(digits) : ms.toFixed(1));

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
