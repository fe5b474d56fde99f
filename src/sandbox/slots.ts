// A fixed number of places for work done at once; callers beyond it wait in order. A freed place
// passes straight to the next waiter, so a caller arriving in between cannot push the count over.

export class Slots {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly max: number) {}

  /** Places taken now; never more than `max`. */
  get inUse(): number {
    return this.running;
  }

  /** Resolves with the function that gives the place back (call it once). */
  async acquire(): Promise<() => void> {
    if (this.running < this.max) this.running++;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    return () => {
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    };
  }
}
