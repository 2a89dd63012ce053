/**
 * `textdetect keys create|list|revoke`: manage the service's API key file.
 *
 *   textdetect keys create --name NAME [--env sandbox|production] [--expires DATE] [--rate-limit N] [--file F]
 *   textdetect keys list [--json] [--file F]
 *   textdetect keys revoke KEY_ID_OR_KEY [--file F]
 *
 * The file defaults to $API_KEYS_FILE, else the service's default location. `create` prints the new
 * key alone on the last line of stdout (so scripts can take `tail -n 1`); it is shown only once.
 */
import { parseArgs } from 'node:util';
import { defaultApiKeysFile } from '../service/config.ts';
import { KeyFileError, createApiKey, listApiKeys, revokeApiKey } from '../service/keys.ts';

const USAGE = `Usage:
  textdetect keys create --name NAME [--env sandbox|production] [--expires DATE] [--rate-limit N] [--file F]
  textdetect keys list [--json] [--file F]
  textdetect keys revoke KEY_ID_OR_KEY [--file F]

  --file F        key file (default: $API_KEYS_FILE, else ${defaultApiKeysFile()})
  --env           sandbox (sk_test_ keys, default) or production (sk_live_ keys)
  --expires DATE  ISO date or timestamp after which the key is refused
  --rate-limit N  requests per window for this key instead of the server's RATE_LIMIT_MAX
`;

function fail(message: string): number {
  process.stderr.write(`textdetect keys: ${message}\n\n${USAGE}`);
  return 2;
}

export async function run(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  // Asked-for help goes to stdout with 0; a missing subcommand is a usage error (stderr, 2).
  if (command === undefined) return fail('give a command: create, list or revoke');
  if (command === '--help' || command === '-h' || command === 'help' || rest.includes('--help') || rest.includes('-h')) {
    process.stdout.write(USAGE);
    return 0;
  }
  let parsed;
  try {
    parsed = parseArgs({
      args: rest,
      allowPositionals: true,
      strict: true,
      options: {
        file: { type: 'string' },
        name: { type: 'string' },
        env: { type: 'string' },
        expires: { type: 'string' },
        'rate-limit': { type: 'string' },
        json: { type: 'boolean' },
      },
    });
  } catch (err) {
    return fail((err as Error).message);
  }
  const { values, positionals } = parsed;
  const file = values.file ?? (process.env.API_KEYS_FILE?.trim() || defaultApiKeysFile());

  try {
    switch (command) {
      case 'create': {
        if (positionals.length > 0) return fail(`unexpected argument "${positionals[0]}"`);
        if (!values.name) return fail('--name is required');
        const env = values.env ?? 'sandbox';
        if (env !== 'sandbox' && env !== 'production') return fail(`--env must be sandbox or production, not "${env}"`);
        // Checked here so the message names the flag; the library's own check speaks of `expiresAt`.
        if (values.expires !== undefined && Number.isNaN(Date.parse(values.expires))) {
          return fail(`--expires must be an ISO date such as 2027-01-31 or 2027-01-31T12:00:00Z, not "${values.expires}"`);
        }
        // A key that is refused from its first request is never what was meant: say so, make nothing.
        if (values.expires !== undefined && Date.parse(values.expires) <= Date.now()) {
          process.stderr.write(
            `textdetect keys: --expires ${values.expires} is in the past, so the key would be refused from the start; no key was created. Give a later date (it is when the key stops working).\n`,
          );
          return 2;
        }
        let rateLimitMax: number | undefined;
        if (values['rate-limit'] !== undefined) {
          rateLimitMax = Number(values['rate-limit']);
          if (!Number.isSafeInteger(rateLimitMax) || rateLimitMax < 1) return fail('--rate-limit must be a positive integer');
        }
        const { id, key } = await createApiKey(file, {
          name: values.name,
          environment: env,
          ...(values.expires !== undefined ? { expiresAt: values.expires } : {}),
          ...(rateLimitMax !== undefined ? { rateLimitMax } : {}),
        });
        process.stdout.write(
          `Created ${env} key ${id} ("${values.name}") in ${file}.\nStore it now: it is not kept in clear and cannot be shown again.\n${key}\n`,
        );
        return 0;
      }
      case 'list': {
        if (positionals.length > 0) return fail(`unexpected argument "${positionals[0]}"`);
        const keys = await listApiKeys(file);
        if (values.json) {
          process.stdout.write(`${JSON.stringify(keys, null, 2)}\n`);
          return 0;
        }
        if (keys.length === 0) {
          process.stdout.write(`No keys in ${file}.\n`);
          return 0;
        }
        const rows = keys.map((k) => [
          k.id,
          k.status,
          k.environment,
          k.hint,
          isoSeconds(k.created_at),
          k.expires_at ? isoSeconds(k.expires_at) : '-',
          k.rate_limit_max === null ? '-' : String(k.rate_limit_max),
          k.name,
        ]);
        const header = ['ID', 'STATUS', 'ENV', 'KEY', 'CREATED', 'EXPIRES', 'LIMIT', 'NAME'];
        const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
        const line = (cells: string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join('  ');
        process.stdout.write(`${[line(header), ...rows.map(line)].join('\n')}\n`);
        return 0;
      }
      case 'revoke': {
        if (positionals.length !== 1) return fail('revoke takes exactly one key id (key_…) or key');
        const revoked = await revokeApiKey(file, positionals[0]!);
        if (!revoked) {
          process.stderr.write(
            `textdetect keys: no key "${positionals[0]!.startsWith('sk_') ? `${positionals[0]!.slice(0, 8)}…` : positionals[0]}" in ${file}\n`,
          );
          return 2;
        }
        if (revoked.already_revoked) {
          // Nothing changed: a script revoking a key it thinks is live learns it was not.
          process.stderr.write(
            `textdetect keys: ${revoked.id} ("${revoked.name}") was already revoked at ${revoked.revoked_at}; nothing changed.\n`,
          );
          return 1;
        }
        process.stdout.write(`Revoked ${revoked.id} ("${revoked.name}") at ${revoked.revoked_at}.\n`);
        return 0;
      }
      default:
        return fail(`unknown command "${command}"`);
    }
  } catch (err) {
    if (err instanceof KeyFileError) {
      process.stderr.write(`textdetect keys: ${err.message}\n`);
      return 2;
    }
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'EACCES' || e.code === 'EPERM') {
      process.stderr.write(`textdetect keys: permission denied on ${file}\n`);
      return 3;
    }
    process.stderr.write(`textdetect keys: ${e.message}\n`);
    return 5;
  }
}

/** A stored ISO time to the second, as both date columns print it (`2027-06-30T00:00:00Z`). */
function isoSeconds(stored: string): string {
  const time = Date.parse(stored);
  return Number.isNaN(time) ? stored : `${new Date(time).toISOString().slice(0, 19)}Z`;
}
