/**
 * Sample weights for a two-class fit over cells of very different size (sources, modes): each cell
 * weighs (mean cell size / its size)^balance, times an item's own `scale`, then both labels weigh the
 * same in total (mean 1). The polish head and the assistant head are fitted with these.
 */
export function balancedCellWeights<T>(
  items: readonly T[],
  cell: (item: T) => string,
  label: (item: T) => 0 | 1,
  balance: number,
  scale: (item: T) => number = () => 1,
): number[] {
  const counts = new Map<string, number>();
  for (const item of items) counts.set(cell(item), (counts.get(cell(item)) ?? 0) + 1);
  const meanSize = items.length / counts.size;
  const raw = items.map((item) => (meanSize / counts.get(cell(item))!) ** balance * scale(item));
  const total = [0, 0];
  raw.forEach((w, j) => {
    total[label(items[j]!)]! += w;
  });
  return raw.map((w, j) => (w * items.length) / (2 * total[label(items[j]!)]!));
}
