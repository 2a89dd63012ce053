/**
 * The page's files, read once at start from ./assets (copied beside the compiled code by the build),
 * with the server's settings written into the page as data attributes and `<option>`s; and the
 * words every surface shows an answer with (src/words.ts and the contract it imports), served to
 * the page as modules of their own so the page says what the CLI and the bots say.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { KEY_PREFIX, type KeyEnvironment } from '../keys.ts';

export interface Asset {
  body: Buffer;
  type: string;
  etag: string;
}

export interface PageSettings {
  maxTextChars: number;
  defaultMode: string;
  modes: readonly string[];
  environment: KeyEnvironment;
  /** Largest file POST /v1/detect/file accepts (the page checks it before sending). */
  maxFileBytes: number;
}

const FILES: Record<string, string> = {
  'app.js': 'text/javascript; charset=utf-8',
  'render.js': 'text/javascript; charset=utf-8',
  'wording.js': 'text/javascript; charset=utf-8',
  'style.css': 'text/css; charset=utf-8',
  'icon.svg': 'image/svg+xml',
};

/** Shown in the mode menu; a mode added to the API without a label here still appears, by name. */
const MODE_LABELS: Record<string, string> = {
  general: 'General',
  academic: 'Academic: essays, papers, abstracts',
  financial: 'Financial: reports, filings, analyses',
  legal: 'Legal: contracts, rulings, terms',
};

/** Modules of src/ the page imports, by the name it imports them under (beside its own files). */
const SHARED_MODULES = ['words', 'contract'] as const;

function read(name: string): Promise<Buffer> {
  return readFile(new URL(`./assets/${name}`, import.meta.url));
}

/**
 * A module of src/ as JavaScript for the browser. Built, it is the compiled file beside this one's
 * folder (dist/src/words.js); run from source (`npm run dev`, the tests), it is the TypeScript with
 * its types stripped by Node, imports pointed at the `.js` names the page asks for.
 */
async function sharedModule(name: (typeof SHARED_MODULES)[number]): Promise<Buffer> {
  if (!import.meta.url.endsWith('.ts')) return readFile(new URL(`../../${name}.js`, import.meta.url));
  const source = await readFile(new URL(`../../${name}.ts`, import.meta.url), 'utf8');
  // Loaded here, not at the top: the built service never needs it, and an entry point must reach its
  // Node version check (src/node-version.ts) on a Node without it.
  const { stripTypeScriptTypes } = await import('node:module');
  if (typeof stripTypeScriptTypes !== 'function') {
    throw new Error(
      `The page's words (src/${name}.ts) need Node.js 22.13 or newer to run from source; run \`npm run build\` and start dist/.`,
    );
  }
  // Node calls the function experimental and warns at its first use; the warning says nothing to a
  // developer running the service from source, so it is not passed on.
  const emitWarning = process.emitWarning;
  process.emitWarning = () => undefined;
  let code: string;
  try {
    code = stripTypeScriptTypes(source, { mode: 'strip' });
  } finally {
    process.emitWarning = emitWarning;
  }
  return Buffer.from(code.replace(/(\bfrom\s+)(['"])(\.\/[\w-]+)\.ts\2/g, '$1$2$3.js$2'), 'utf8');
}

function asset(body: Buffer, type: string): Asset {
  return { body, type, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"` };
}

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function modeOptions(settings: PageSettings): string {
  return settings.modes
    .map((mode) => {
      const selected = mode === settings.defaultMode ? ' selected' : '';
      return `<option value="${escapeHtml(mode)}"${selected}>${escapeHtml(MODE_LABELS[mode] ?? mode)}</option>`;
    })
    .join('\n              ');
}

export async function loadAssets(settings: PageSettings): Promise<{ version: string; page: Asset; files: Map<string, Asset> }> {
  const files = new Map<string, Asset>();
  const versionHash = createHash('sha256');
  for (const [name, type] of Object.entries(FILES)) {
    const body = await read(name);
    versionHash.update(name).update(body);
    files.set(name, asset(body, type));
  }
  for (const name of SHARED_MODULES) {
    const body = await sharedModule(name);
    versionHash.update(name).update(body);
    files.set(`${name}.js`, asset(body, 'text/javascript; charset=utf-8'));
  }
  const template = (await read('index.html')).toString('utf8');
  versionHash.update(template);
  const version = versionHash.digest('hex').slice(0, 12);
  const values: Record<string, string> = {
    VERSION: version,
    MAX_TEXT_CHARS: String(settings.maxTextChars),
    MAX_TEXT_CHARS_TEXT: settings.maxTextChars.toLocaleString('en-US'),
    DEFAULT_MODE: settings.defaultMode,
    ENVIRONMENT: settings.environment,
    ENVIRONMENT_LABEL: settings.environment === 'production' ? 'Production' : 'Sandbox',
    KEY_PREFIX: KEY_PREFIX[settings.environment],
    MAX_FILE_BYTES: String(settings.maxFileBytes),
    MAX_FILE_SIZE_TEXT:
      settings.maxFileBytes >= 1024 * 1024
        ? `${Math.round((settings.maxFileBytes / (1024 * 1024)) * 10) / 10} MB`
        : `${Math.round(settings.maxFileBytes / 1024)} KB`,
  };
  const html = template.replace(/\{\{([A-Z_]+)\}\}/g, (whole, name: string) => {
    if (name === 'MODE_OPTIONS') return modeOptions(settings);
    const value = values[name];
    if (value === undefined) throw new Error(`playground page: unknown placeholder ${whole}`);
    return escapeHtml(value);
  });
  return { version, page: asset(Buffer.from(html, 'utf8'), 'text/html; charset=utf-8'), files };
}
