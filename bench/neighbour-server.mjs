// Bench-only wrapper around the real `sandgate serve` (dist/cli/main.js): the hostile-neighbour
// bench forks it to read the server's own event-loop delay and memory over IPC, no endpoint added.
//
// Messages from the parent: {type: "reset"} starts a new measurement window, {type: "stats"}
// answers {type: "stats", eld: {p50, p99, max} in ms, rssPeakMb, rssMb, heapMb}.

import { monitorEventLoopDelay } from "node:perf_hooks";

/** 5 ms sampling: finer than the 50 ms goal, cheap enough not to be the delay it measures. */
const eld = monitorEventLoopDelay({ resolution: 5 });
eld.enable();
let rssPeak = 0;
const sample = () => {
  rssPeak = Math.max(rssPeak, process.memoryUsage.rss());
};
setInterval(sample, 50).unref();

const ms = (ns) => ns / 1e6;
process.on("message", (msg) => {
  if (msg?.type === "reset") {
    eld.reset();
    rssPeak = process.memoryUsage.rss();
    process.send?.({ type: "reset" });
  } else if (msg?.type === "stats") {
    sample();
    const { rss, heapUsed } = process.memoryUsage();
    process.send?.({
      type: "stats",
      eld: { p50: ms(eld.percentile(50)), p99: ms(eld.percentile(99)), max: ms(eld.max), count: eld.count },
      rssPeakMb: rssPeak / 2 ** 20,
      rssMb: rss / 2 ** 20,
      heapMb: heapUsed / 2 ** 20,
    });
  }
});
// The IPC channel keeps no one alive: the server ends on SIGTERM as `sandgate serve` does.
process.channel?.unref();

process.argv = [process.argv[0], new URL("../dist/cli/main.js", import.meta.url).pathname, "serve", ...process.argv.slice(2)];
await import("../dist/cli/main.js");
