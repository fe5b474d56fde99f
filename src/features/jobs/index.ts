// The jobs feature: calls run in the background, polled, listed and stopped by their caller.
export { getJob, listJobs, readJob, renderJobText, stopJob, type JobsHost } from "./operations.js";
export { getJobInput, getJobToolOutput, JOB_WAIT_UNTIL, jobSchema, jobSnapshotSchema, jobSnapshotToolSchema, listJobsOutput, MAX_JOB_WAIT_S, stopJobInput, toWireJob, toWireJobSnapshot } from "./wire.js";

import { getJob, listJobs, readJob, stopJob } from "./operations.js";

/** The operations of this feature, for the registry: get_job and stop_job on MCP (in this order); list, read and stop on REST. */
export const jobOperations = [getJob, listJobs, readJob, stopJob] as const;
