/**
 * docs/discord.md against the code it describes: the sentences it quotes are the ones the bot sends,
 * and the Node.js it asks for is the one package.json requires.
 */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { DEFAULT_SETTINGS } from '../../adapters/discord/config.ts';
import { expiredButtonSentence } from '../../adapters/discord/handlers/recheck-button.ts';

const read = (path: string): Promise<string> => readFile(new URL(`../../${path}`, import.meta.url), 'utf8');

describe('docs/discord.md', () => {
  it('quotes the expired-button answer the bot gives, and says a restart forgets nothing', async () => {
    const doc = await read('docs/discord.md');
    expect(doc).toContain(`"${expiredButtonSentence(DEFAULT_SETTINGS.recheckTtlMs / 60_000)}"`);
    expect(doc).not.toMatch(/forgets? (it|them|the texts?) (when|on|after) (it )?restart/i);
  });

  it('asks for the Node.js version package.json requires', async () => {
    const [doc, pkg] = await Promise.all([read('docs/discord.md'), read('package.json')]);
    const required = Number(/(\d+)/.exec((JSON.parse(pkg) as { engines: { node: string } }).engines.node)?.[1]);
    const named = [...doc.matchAll(/\bNode(?:\.js)? (\d+)\b/g)].map((m) => Number(m[1]));
    expect(named.length).toBeGreaterThan(0);
    for (const version of named) expect(version).toBeGreaterThanOrEqual(required);
  });
});
