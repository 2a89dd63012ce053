/**
 * Turns a Slack message (or slash-command text) into the plain words a reader sees, which is what
 * the detector must score: Slack's escaped entities decoded, `<@U123>`, `<#C1|name>` and
 * `<https://x|label>` rendered as words, rich-text blocks walked element by element, and the text
 * of attachments included.
 */

/** Looks up names for ids; any lookup may fail or be absent, and the renderer then uses a neutral word. */
export interface NameResolver {
  user?(id: string): Promise<string | undefined>;
  channel?(id: string): Promise<string | undefined>;
  usergroup?(id: string): Promise<string | undefined>;
}

/** Slack escapes exactly these three in message text; `&amp;` last so `&amp;lt;` stays `&lt;`. */
export function decodeSlackEntities(text: string): string {
  return text.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

async function lookup(fn: ((id: string) => Promise<string | undefined>) | undefined, id: string): Promise<string | undefined> {
  if (!fn) return undefined;
  try {
    const name = await fn(id);
    return name?.trim() || undefined;
  } catch {
    return undefined;
  }
}

/** One `<…>` token of Slack's mrkdwn as the words a reader sees. */
async function renderToken(inner: string, names: NameResolver): Promise<string> {
  const bar = inner.indexOf('|');
  const target = bar === -1 ? inner : inner.slice(0, bar);
  const label = bar === -1 ? undefined : inner.slice(bar + 1);
  if (target.startsWith('@')) {
    const id = target.slice(1);
    if (label) return label.startsWith('@') ? label : `@${label}`;
    const name = await lookup(names.user, id);
    return name ? `@${name}` : '@someone';
  }
  if (target.startsWith('#')) {
    const id = target.slice(1);
    if (label) return `#${label}`;
    const name = await lookup(names.channel, id);
    return name ? `#${name}` : '#a-channel';
  }
  if (target.startsWith('!')) {
    const command = target.slice(1);
    if (command === 'here' || command === 'channel' || command === 'everyone') return `@${command}`;
    if (command.startsWith('subteam^')) {
      if (label) return label.startsWith('@') ? label : `@${label}`;
      const name = await lookup(names.usergroup, command.slice('subteam^'.length));
      return name ? `@${name}` : '@a-group';
    }
    // `<!date^…|fallback>` and other commands: their label is what clients show.
    return label ?? '';
  }
  // A link: its label when it has one, else the address as shown (mailto: dropped).
  if (label) return label;
  return target.replace(/^mailto:/, '');
}

/** Renders Slack mrkdwn (message `text`, slash-command text) as plain words and decodes entities. */
export async function renderSlackMrkdwn(text: string, names: NameResolver = {}): Promise<string> {
  const parts: string[] = [];
  let last = 0;
  for (const match of text.matchAll(/<([^<>\n]+)>/g)) {
    const index = match.index ?? 0;
    parts.push(decodeSlackEntities(text.slice(last, index)));
    parts.push(decodeSlackEntities(await renderToken(match[1] ?? '', names)));
    last = index + match[0].length;
  }
  parts.push(decodeSlackEntities(text.slice(last)));
  return parts.join('');
}

type Json = Record<string, unknown>;

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null;
}

function asArray(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

/** `1f44d` or `1f468-200d-1f4bb` → the emoji; undefined when malformed. */
function emojiFromHex(hex: string): string | undefined {
  try {
    const cps = hex.split('-').map((h) => Number.parseInt(h, 16));
    if (cps.some((c) => !Number.isFinite(c) || c < 0 || c > 0x10ffff)) return undefined;
    return String.fromCodePoint(...cps);
  } catch {
    return undefined;
  }
}

/** Inline rich-text elements (text, link, mentions, emoji, date…) as words. Rich text is not entity-escaped. */
async function renderInline(elements: unknown[], names: NameResolver): Promise<string> {
  let out = '';
  for (const el of elements) {
    if (!isObject(el)) continue;
    switch (el.type) {
      case 'text':
        out += typeof el.text === 'string' ? el.text : '';
        break;
      case 'link':
        out += typeof el.text === 'string' && el.text ? el.text : typeof el.url === 'string' ? el.url.replace(/^mailto:/, '') : '';
        break;
      case 'user': {
        const name = typeof el.user_id === 'string' ? await lookup(names.user, el.user_id) : undefined;
        out += name ? `@${name}` : '@someone';
        break;
      }
      case 'channel': {
        const name = typeof el.channel_id === 'string' ? await lookup(names.channel, el.channel_id) : undefined;
        out += name ? `#${name}` : '#a-channel';
        break;
      }
      case 'usergroup': {
        const name = typeof el.usergroup_id === 'string' ? await lookup(names.usergroup, el.usergroup_id) : undefined;
        out += name ? `@${name}` : '@a-group';
        break;
      }
      case 'broadcast':
        out += typeof el.range === 'string' ? `@${el.range}` : '';
        break;
      case 'team':
        out += '@a-workspace';
        break;
      case 'emoji':
        out += (typeof el.unicode === 'string' && emojiFromHex(el.unicode)) || (typeof el.name === 'string' ? `:${el.name}:` : '');
        break;
      case 'date':
        out += typeof el.fallback === 'string' ? el.fallback : '';
        break;
      case 'color':
        out += typeof el.value === 'string' ? el.value : '';
        break;
      default:
        if (typeof el.text === 'string') out += el.text;
    }
  }
  return out;
}

/** A `rich_text` block: sections, lists (one item per line), quotes and preformatted text. */
export async function renderRichTextBlock(block: Json, names: NameResolver = {}): Promise<string> {
  const pieces: string[] = [];
  for (const child of asArray(block.elements)) {
    if (!isObject(child)) continue;
    switch (child.type) {
      case 'rich_text_list': {
        const ordered = child.style === 'ordered';
        const items: string[] = [];
        let n = typeof child.offset === 'number' ? child.offset : 0;
        for (const item of asArray(child.elements)) {
          if (!isObject(item)) continue;
          n++;
          items.push(`${ordered ? `${n}.` : '•'} ${(await renderInline(asArray(item.elements), names)).trim()}`);
        }
        pieces.push(items.join('\n'));
        break;
      }
      case 'rich_text_section':
      case 'rich_text_quote':
      case 'rich_text_preformatted':
        pieces.push(await renderInline(asArray(child.elements), names));
        break;
      default:
        break;
    }
  }
  // Sections carry their own line breaks inside text elements; other elements start on a new line.
  return pieces.map((p) => p.replace(/\n+$/, '')).join('\n');
}

/** Text of non-rich blocks that bots post (section, header, context). */
async function renderLayoutBlock(block: Json, names: NameResolver): Promise<string> {
  const textOf = async (obj: unknown): Promise<string> => {
    if (!isObject(obj) || typeof obj.text !== 'string') return '';
    return obj.type === 'mrkdwn' ? renderSlackMrkdwn(obj.text, names) : obj.text;
  };
  switch (block.type) {
    case 'section': {
      const parts = [await textOf(block.text)];
      for (const f of asArray(block.fields)) parts.push(await textOf(f));
      return parts.filter(Boolean).join('\n');
    }
    case 'header':
      return textOf(block.text);
    case 'context': {
      const parts: string[] = [];
      for (const e of asArray(block.elements)) parts.push(await textOf(e));
      return parts.filter(Boolean).join(' ');
    }
    default:
      return '';
  }
}

async function renderAttachment(att: Json, names: NameResolver): Promise<string> {
  const parts: string[] = [];
  const field = async (v: unknown): Promise<void> => {
    if (typeof v === 'string' && v.trim()) parts.push(await renderSlackMrkdwn(v, names));
  };
  await field(att.pretext);
  await field(att.title);
  await field(att.text);
  for (const f of asArray(att.fields)) {
    if (!isObject(f)) continue;
    await field(f.title);
    await field(f.value);
  }
  // Attachments that carry blocks (e.g. a shared message) hold their text there.
  if (parts.length === 0 && asArray(att.blocks).length > 0) {
    const blocks = await renderBlocks(asArray(att.blocks), names);
    if (blocks) parts.push(blocks);
  }
  if (parts.length === 0) await field(att.fallback);
  return parts.join('\n');
}

async function renderBlocks(blocks: unknown[], names: NameResolver): Promise<string> {
  const rich = blocks.filter((b): b is Json => isObject(b) && b.type === 'rich_text');
  const parts: string[] = [];
  if (rich.length > 0) {
    for (const b of rich) parts.push(await renderRichTextBlock(b, names));
  } else {
    for (const b of blocks) if (isObject(b)) parts.push(await renderLayoutBlock(b, names));
  }
  return parts.filter((p) => p.trim()).join('\n\n');
}

/** The subset of a Slack message object that carries text. */
export interface SlackMessageLike {
  text?: string | undefined;
  blocks?: unknown[] | undefined;
  attachments?: unknown[] | undefined;
}

/**
 * The words of a message as its readers see them. Rich-text blocks are preferred over `text`
 * because both hold the same words and only the blocks carry mention ids reliably; messages without
 * blocks (older clients, some bots) fall back to `text`. Attachment text is appended, since clients
 * show it as part of the message.
 */
export async function extractSlackMessageText(message: SlackMessageLike, names: NameResolver = {}): Promise<string> {
  const parts: string[] = [];
  const fromBlocks = await renderBlocks(asArray(message.blocks), names);
  if (fromBlocks.trim()) parts.push(fromBlocks);
  else if (typeof message.text === 'string' && message.text.trim()) parts.push(await renderSlackMrkdwn(message.text, names));
  for (const att of asArray(message.attachments)) {
    if (!isObject(att)) continue;
    const text = await renderAttachment(att, names);
    if (text.trim()) parts.push(text);
  }
  return parts.join('\n\n');
}
