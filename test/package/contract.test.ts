/**
 * src/contract.ts is the one definition of the wire contract: the service's schemas, error answers
 * and the SDK's exports must all come from it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import * as sdk from '../../src/client/index.ts';
import { CONFIDENCES, ERROR_CODES, errorTypeFor, LANGUAGES, MODES, VERDICTS } from '../../src/contract.ts';
import { GENERIC, errorTypeFor as serviceErrorTypeFor } from '../../src/service/errors.ts';
import { detectRequestSchema, detectResponseSchema } from '../../src/service/schemas.ts';

describe('the contract module', () => {
  it('is what the service validates requests and serialises answers with', () => {
    const request = detectRequestSchema(100).properties;
    expect(request.mode.enum).toEqual([...MODES]);
    expect(request.language.enum).toEqual([...LANGUAGES]);
    const response = detectResponseSchema.properties;
    expect(response.mode.enum).toEqual([...MODES]);
    expect(response.language.enum).toEqual([...LANGUAGES]);
    expect(response.verdict.enum).toEqual([...VERDICTS]);
    expect(response.confidence.enum).toEqual([...CONFIDENCES]);
  });

  it('lists every generic error code the service answers with, and fixes the error type per status', () => {
    for (const { code } of Object.values(GENERIC)) expect(ERROR_CODES).toContain(code);
    expect(serviceErrorTypeFor).toBe(errorTypeFor);
    expect([400, 401, 403, 404, 413, 429, 500, 503].map(errorTypeFor)).toEqual([
      'invalid_request_error',
      'authentication_error',
      'permission_error',
      'invalid_request_error',
      'invalid_request_error',
      'rate_limit_error',
      'api_error',
      'api_error',
    ]);
  });

  it('lists every specific error code the service answers with', () => {
    const dir = new URL('../../src/service/', import.meta.url);
    const codes = new Set<string>();
    // The plugins and routes live in subfolders (plugins/, routes/).
    for (const file of readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((name) => name.endsWith('.ts'))) {
      const source = readFileSync(new URL(file, dir), 'utf8');
      for (const match of source.matchAll(/new ApiError\(\s*\d+,\s*'([a-z_]+)'/g)) codes.add(match[1]!);
    }
    expect(codes.size).toBeGreaterThan(10);
    for (const code of codes) expect(ERROR_CODES).toContain(code);
  });

  it('is re-exported by the SDK', () => {
    expect(sdk.MODES).toBe(MODES);
    expect(sdk.LANGUAGES).toBe(LANGUAGES);
    expect(sdk.ERROR_CODES).toBe(ERROR_CODES);
  });
});
