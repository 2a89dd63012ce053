/**
 * One transcript entry drawn twice: as terminal lines (what `npm run demo` prints) and as HTML (the
 * page). Both show the same things: where, who, only-you, the action and its text's source, each
 * message's heading, text, fields, footer and buttons.
 */
import { escapeHtml, type Names, toHtml, toPlain } from './markup.ts';
import type { Entry, Message } from './transcript.ts';

function where(entry: Entry): string {
  // Discord marks a channel message edited; an answer only the moderator sees is simply replaced.
  return `#${entry.channel} · ${entry.author}${entry.onlyYou ? ' · only you can see this' : entry.edited ? ' · edited' : ''}`;
}

function indent(text: string, prefix: string): string[] {
  return text.split('\n').map((line) => `${prefix}${line}`);
}

function messageLines(message: Message, names: Names): string[] {
  const bar = '  ┃ ';
  const lines: string[] = [];
  if (message.title) lines.push(...indent(toPlain(message.title, names), bar));
  if (message.text) lines.push(...indent(toPlain(message.text, names), bar));
  for (const field of message.fields) {
    const value = toPlain(field.value, names);
    if (value.includes('\n')) lines.push(`${bar}${field.name}:`, ...indent(value, `${bar}  `));
    else lines.push(`${bar}${field.name}: ${value}`);
  }
  if (message.footer) lines.push(`${bar}(${toPlain(message.footer, names)})`);
  if (message.buttons.length > 0) lines.push(`${bar}${message.buttons.map((b) => `[${b.label}]`).join(' ')}`);
  return lines;
}

/** The entry as the terminal prints it. */
export function entryLines(entry: Entry, names: Names): string[] {
  if (!entry.bot && entry.action) {
    return [`${where(entry)}: ${entry.action}`, ...(entry.source ? [`  (text: ${entry.source})`] : [])];
  }
  if (!entry.bot) {
    const text = entry.messages.map((m) => toPlain(m.text ?? '', names)).join(' ');
    const flat = text.replace(/\s+/g, ' ');
    return [`${where(entry)}: “${flat.length > 100 ? `${flat.slice(0, 99)}…` : flat}”`];
  }
  return [`${where(entry)}:`, ...entry.messages.flatMap((m) => messageLines(m, names))];
}

function colour(value: number | undefined): string {
  return value === undefined ? '#c7ccd1' : `#${value.toString(16).padStart(6, '0')}`;
}

function messageHtml(entry: Entry, message: Message, names: Names): string {
  const parts: string[] = [];
  if (message.title) parts.push(`<div class="title">${toHtml(message.title, names)}</div>`);
  if (message.text) parts.push(`<div class="text">${toHtml(message.text, names)}</div>`);
  if (message.fields.length > 0) {
    parts.push(`<dl>${message.fields.map((f) => `<dt>${toHtml(f.name, names)}</dt><dd>${toHtml(f.value, names)}</dd>`).join('')}</dl>`);
  }
  if (message.footer) parts.push(`<div class="footer">${toHtml(message.footer, names)}</div>`);
  if (message.buttons.length > 0) {
    const buttons = message.buttons.map(
      (b) => `<button class="${b.style}" data-entry="${entry.id}" data-button="${escapeHtml(b.id)}">${escapeHtml(b.label)}</button>`,
    );
    parts.push(`<div class="buttons">${buttons.join('')}</div>`);
  }
  return `<div class="message" style="border-left-color:${colour(message.color)}">${parts.join('')}</div>`;
}

/** The entry as the page draws it. */
export function entryHtml(entry: Entry, names: Names): string {
  const kind = entry.bot ? 'bot' : entry.action ? 'action' : 'post';
  const head = `<div class="meta">${escapeHtml(where(entry))}</div>`;
  if (!entry.bot && entry.action) {
    const source = entry.source ? `<div class="source">text: ${escapeHtml(entry.source)}</div>` : '';
    return `<div class="entry ${kind}">${head}<div class="command">${escapeHtml(entry.action)}</div>${source}</div>`;
  }
  const body = entry.bot
    ? entry.messages.map((m) => messageHtml(entry, m, names)).join('')
    : `<div class="said">${entry.messages.map((m) => toHtml(m.text ?? '', names)).join('<br>')}</div>`;
  const source = !entry.bot && entry.source ? `<div class="source">text: ${escapeHtml(entry.source)}</div>` : '';
  return `<div class="entry ${kind}">${head}${body}${source}</div>`;
}
