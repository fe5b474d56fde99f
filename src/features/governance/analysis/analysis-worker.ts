// The entry of an analysis worker thread: analyses one {id, language, code} at a time and answers
// with the analysis or the error, so a hang or a crash of the analysis costs a worker, not the server.

import { parentPort } from "node:worker_threads";
import type { Language } from "../../../languages/index.js";
import { Analyzer } from "./analyzer.js";

interface Job {
  id: number;
  language: Language;
  code: string;
}

const port = parentPort;
if (port) {
  // No cache here: the pool's owner keeps one, in front of the workers.
  const analyzer = new Analyzer({ cacheEntries: 0 });
  // Ready once the grammars are loaded: the pool starts a job's deadline then.
  analyzer.ready().then(
    () => port.postMessage({ ready: true }),
    (error: unknown) => port.postMessage({ ready: false, error: error instanceof Error ? error.message : String(error) }),
  );
  port.on("message", (job: Job) => {
    analyzer.analyze(job.language, job.code, { inline: true }).then(
      (analysis) => port.postMessage({ id: job.id, analysis }),
      (error: unknown) => port.postMessage({ id: job.id, error: error instanceof Error ? error.message : String(error) }),
    );
  });
}
