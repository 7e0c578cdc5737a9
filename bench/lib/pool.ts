// Runs fn over items, at most `jobs` at a time, in the items' order of start (the benches' worker pool).
export async function pool<T>(items: T[], jobs: number, fn: (t: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(jobs, items.length) }, async () => {
    while (next < items.length) {
      const t = items[next++];
      await fn(t);
    }
  }));
}
