// The composition root: createApp builds a sandgate's parts, starts and closes them in order,
// for `sandgate serve`, `stdio`, `exec`, the benchmarks and the tests alike.

export { createApp } from "./app.js";
export type { App, AppCloseOptions, AppOptions } from "./app.js";
export { settlesWithin } from "./settles-within.js";
