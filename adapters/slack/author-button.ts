/**
 * The "Check their recent messages" button under a message check: its action id and the value it
 * carries back (the member to check; the channel is the one the button was pressed in).
 */

export const ACTION_AUTHOR_CHECK = 'check_author';

export interface AuthorButtonValue {
  /** The member to check. */
  u: string;
}

export function encodeAuthorButton(value: AuthorButtonValue): string {
  return JSON.stringify(value);
}

export function decodeAuthorButton(raw: string | undefined): AuthorButtonValue | undefined {
  if (!raw) return undefined;
  try {
    const parsed = JSON.parse(raw) as Partial<AuthorButtonValue>;
    return typeof parsed.u === 'string' && /^[UW][A-Z0-9]+$/.test(parsed.u) ? { u: parsed.u } : undefined;
  } catch {
    return undefined;
  }
}
