/**
 * The guard in front of busboy (src/service/routes/file-form.ts): it counts a multipart body's
 * delimiters and stops the body at the first one a complete form cannot have, so busboy never
 * parses a flood of parts. Bodies are fed as a socket would, in chunks.
 */
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { describe, expect, it } from 'vitest';
import type { ApiError } from '../../src/service/errors.ts';
import { DelimiterGuard } from '../../src/service/routes/file-form.ts';

/** Feeds `body` through a guard in chunks of `size` bytes; resolves with the bytes passed on and the error, if any. */
async function feed(body: Buffer, size: number, max = 5): Promise<{ passed: number; error?: ApiError }> {
  const chunks: Buffer[] = [];
  for (let at = 0; at < body.length; at += size) chunks.push(body.subarray(at, at + size));
  let passed = 0;
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      passed += chunk.length;
      done();
    },
  });
  try {
    await pipeline(Readable.from(chunks), new DelimiterGuard('b0undary', max), sink);
    return { passed };
  } catch (error) {
    return { passed, error: error as ApiError };
  }
}

const part = (name: string, value: string) => `--b0undary\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
const form = (...parts: string[]) => Buffer.from(`${parts.join('')}--b0undary--\r\n`);

describe('DelimiterGuard', () => {
  it('passes a complete form of four parts whole, however it is cut into chunks', async () => {
    const body = form(
      `--b0undary\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nSome text -- with dashes\r\n--not a delimiter\r\n`,
      part('mode', 'academic'),
      part('language', 'en'),
      part('segments', 'true'),
    );
    for (const size of [1, 3, 7, 11, 64, 65_536]) {
      expect(await feed(body, size)).toEqual({ passed: body.length });
    }
  });

  it('stops a flood of empty parts in its first chunk, and counts a delimiter cut between chunks once', async () => {
    // The body: a file part, then a million parts of nine bytes.
    const flood = Buffer.from(`${part('file', 'A note.')}${'--b0undary\r\n\r\n\r\n'.repeat(1_000_000)}--b0undary--\r\n`);
    const refused = await feed(flood, 65_536);
    expect(refused.error?.statusCode).toBe(400);
    expect(refused.error?.message).toMatch(/more than 4 parts/);
    // Not one byte of the chunk holding the sixth delimiter reached the parser.
    expect(refused.passed).toBe(0);
    // Six delimiters, the sixth split over two chunks at every possible place: refused each time.
    const six = form(part('file', 'x'), part('mode', 'general'), part('language', 'en'), part('segments', 'true'), part('extra', 'y'));
    for (const size of [1, 2, 5, 9, 13]) {
      expect((await feed(six, size)).error?.statusCode).toBe(400);
    }
    // Five (four parts and the closing one) pass.
    const five = form(part('file', 'x'), part('mode', 'general'), part('language', 'en'), part('segments', 'true'));
    for (const size of [1, 2, 5, 9, 13]) {
      expect(await feed(five, size)).toEqual({ passed: five.length });
    }
  });
});
