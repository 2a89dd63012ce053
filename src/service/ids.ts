/**
 * Request ids: `req_` + 26 Crockford base32 characters, a 48-bit millisecond timestamp followed by
 * 80 random bits. Ids sort by creation time (lexicographically), so logs and support tickets can be
 * ordered by id alone; within one millisecond the random part is incremented rather than redrawn so
 * ids stay strictly increasing per process.
 */
import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

let lastTime = -1;
const lastRandom = new Uint8Array(10);

function encodeTime(time: number): string {
  let out = '';
  let value = time;
  for (let i = 0; i < 10; i++) {
    out = ALPHABET[value % 32] + out;
    value = Math.floor(value / 32);
  }
  return out;
}

function encodeRandom(bytes: Uint8Array): string {
  // 80 bits = 16 base32 digits; read 5 bits at a time from the big-endian byte array.
  let out = '';
  let buffer = 0;
  let bits = 0;
  for (const byte of bytes) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out += ALPHABET[(buffer >> bits) & 31];
    }
    buffer &= (1 << bits) - 1;
  }
  return out;
}

function incrementRandom(): void {
  for (let i = lastRandom.length - 1; i >= 0; i--) {
    const next = (lastRandom[i] ?? 0) + 1;
    lastRandom[i] = next & 0xff;
    if (next <= 0xff) return;
  }
}

export function newRequestId(now = Date.now()): string {
  if (now <= lastTime) {
    incrementRandom();
  } else {
    lastTime = now;
    lastRandom.set(randomBytes(10));
  }
  return `req_${encodeTime(lastTime)}${encodeRandom(lastRandom)}`;
}

/** Matches ids produced by `newRequestId`. */
export const REQUEST_ID_PATTERN = /^req_[0-9A-HJKMNP-TV-Z]{26}$/;

/** The caller's `X-Request-Id` must be a UUID (any version), so it is safe to log and echo back. */
export const CALLER_REQUEST_ID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
