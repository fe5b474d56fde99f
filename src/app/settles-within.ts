// Waiting with a deadline: whether some work settled in time, for a stop that must end whatever
// is stuck (a helper that will not die, an upstream server that will not answer).

/** Whether `work` settled (fulfilled or rejected) within `ms`; Infinity waits for it. */
export async function settlesWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  const settled = work.then(
    () => true,
    () => true,
  );
  if (!Number.isFinite(ms)) return settled;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  return Promise.race([settled, late]).finally(() => clearTimeout(timer));
}
