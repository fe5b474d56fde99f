// Turns at scanning text for personal data: a big scan runs in slices, and between two slices the
// event loop serves everyone else; callers waiting for a turn are served round-robin.

/**
 * One slice at a time, each in its own pass of the event loop (setImmediate runs after I/O), the
 * callers taking turns: a caller printing 10 MB or downloading a 46 MB text file waits its turn
 * like everyone else, and another client's request is answered between two slices.
 */
export class ScanTurns {
  /** Callers waiting, in the order they are served (a served caller with more to do goes last). */
  private readonly waiting = new Map<string, Array<() => void>>();
  private scheduled = false;

  /** Resolves when `caller` may scan its next slice. */
  turn(caller: string): Promise<void> {
    return new Promise((resolve) => {
      const queue = this.waiting.get(caller);
      if (queue) queue.push(resolve);
      else this.waiting.set(caller, [resolve]);
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.next());
  }

  private next(): void {
    this.scheduled = false;
    const first = this.waiting.entries().next();
    if (first.done === true) return;
    const [caller, queue] = first.value;
    const resolve = queue.shift();
    this.waiting.delete(caller);
    if (queue.length > 0) this.waiting.set(caller, queue);
    if (this.waiting.size > 0) this.schedule();
    resolve?.();
  }
}
