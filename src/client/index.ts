/**
 * textdetect client SDK: what `import … from 'textdetect-client'` (the standalone package built from
 * this folder, packages/client/) and `import … from 'textdetect'` give. Stands alone (no import from
 * the service or the engine, only the wire contract in src/contract.ts and the version reader), so an
 * installed package loads none of the server's code.
 *
 *   const client = new DetectClient({ apiKey, baseUrl });
 *   const result = await client.detect({ text, mode: 'academic' });
 *   const author = await client.detectAuthor({ messages: ['…', '…'] });
 *   const report = await client.detectFile(await readFile('essay.pdf'), { filename: 'essay.pdf' });
 */
export {
  DetectClient,
  DEFAULT_BASE_URL,
  type ClientStats,
  type DetectCallOptions,
  type DetectClientOptions,
  type DetectFileOptions,
  type DetectManyOptions,
  type DetectManyProgress,
  type DetectManyResult,
} from './client.ts';
export type { LimiterOptions } from './limiter.ts';
export type { ClientLogger } from './logger.ts';
export type { RedisClient } from './redis.ts';
export * from './errors.ts';
export type * from './types.ts';
export {
  AUTHOR_MAX_MESSAGES,
  authorRequestCost,
  CHARS_PER_UNIT,
  countChars,
  detectRequestCost,
  COMPOSITIONS,
  CONFIDENCES,
  ERROR_CODES,
  FILE_ERRORS,
  FILE_TYPES,
  fileRequestCost,
  LANGUAGES,
  MODES,
  ORIGINS,
  POLISHED_THRESHOLD,
  SKIP_REASONS,
  VERDICTS,
} from '../contract.ts';
