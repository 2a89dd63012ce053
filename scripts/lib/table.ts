/**
 * The plain-text or Markdown table the scripts print. `alignRight`: columns after the first are
 * right-aligned (figures); otherwise every column is left-aligned.
 */
export function table(head: string[], rows: string[][], markdown: boolean, alignRight = true): string {
  if (markdown) {
    const line = (cells: string[]): string => `| ${cells.join(' | ')} |`;
    return [line(head), line(head.map((_, i) => (i === 0 || !alignRight ? '---' : '---:'))), ...rows.map(line)].join('\n');
  }
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]): string =>
    cells.map((c, i) => (i === 0 || !alignRight ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(head), ...rows.map(line)].join('\n');
}
