import { describe, expect, it } from 'vitest';
import { REQUEST_ID_PATTERN, newRequestId } from '../../src/service/ids.ts';

describe('request ids', () => {
  it('are unique, well-formed and strictly increasing within a process, even within one millisecond', () => {
    const ids = Array.from({ length: 20_000 }, () => newRequestId());
    for (const id of ids) expect(id).toMatch(REQUEST_ID_PATTERN);
    expect(new Set(ids).size).toBe(ids.length);
    for (let i = 1; i < ids.length; i++) expect(ids[i]! > ids[i - 1]!).toBe(true);
  });

  it('sort by creation time', () => {
    const base = Date.now() + 60_000;
    const early = newRequestId(base);
    const later = newRequestId(base + 1);
    const muchLater = newRequestId(base + 86_400_000);
    expect([muchLater, early, later].sort()).toEqual([early, later, muchLater]);
  });
});
