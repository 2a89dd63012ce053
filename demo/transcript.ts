/**
 * What the demo shows: what people did (a moderator's command, a member's post) and what the bot
 * posted, as the platform's stand-in recorded it, in one list the terminal and the page both draw.
 * A bot message the bot edits later (a deferred answer filled in, a review card after a press) is
 * one entry, updated in place.
 */

/** The parts of the tour; `yours` is what someone does on the page afterwards. */
export type Step = 'setup' | 'check' | 'member' | 'document' | 'card' | 'yours';

export const STEP_TITLES: Record<Exclude<Step, 'yours'>, string> = {
  setup: 'Setting up',
  check: '1/4  The checks: /detect on a text',
  member: '2/4  A member check: a member’s recent messages judged together',
  document: '3/4  A document check: a PDF posted to the bot',
  card: '4/4  A review card: a watched channel’s flag, with the moderators’ buttons',
};

export interface Field {
  name: string;
  value: string;
}

export interface Button {
  /** The platform's id for the button (Discord's custom_id, Slack's action_id + value). */
  id: string;
  label: string;
  style: 'primary' | 'secondary' | 'success' | 'danger';
}

/** One message as the platform would draw it: a heading, text, fields, buttons. */
export interface Message {
  title?: string | undefined;
  /** The sidebar colour (Discord's embed colour), as 0xRRGGBB. */
  color?: number | undefined;
  text?: string | undefined;
  fields: Field[];
  /** A line under the fields (Discord's embed footer). */
  footer?: string | undefined;
  buttons: Button[];
}

export interface Entry {
  id: number;
  step: Step;
  /** Milliseconds since the demo process started. */
  atMs: number;
  /** The channel it is in, without `#`. */
  channel: string;
  /** Who posted it or did it. */
  author: string;
  /** True for what the bot posted; false for what a person did. */
  bot: boolean;
  /** Set when only the moderator sees it (an ephemeral answer). */
  onlyYou: boolean;
  /** For what a person did: the command or action, e.g. `/detect text: …`. */
  action?: string | undefined;
  /** Where the text of an action comes from (demo/texts.ts). */
  source?: string | undefined;
  messages: Message[];
  /** Edited since first posted. */
  edited: boolean;
  /** A placeholder the bot fills in later (a deferred answer): the terminal waits for the edit. */
  pending?: boolean | undefined;
  /** Deleted by the bot (a "checking…" line once the answer is there): no longer drawn. */
  removed?: boolean | undefined;
}

type Listener = (entry: Entry) => void;

export class Transcript {
  readonly #entries: Entry[] = [];
  readonly #listeners = new Set<Listener>();
  readonly #stepListeners = new Set<(ended: Step) => void>();
  #step: Step = 'setup';
  /** Counts additions and edits: the page redraws when it changes. */
  version = 0;

  /** Entries added from now on belong to `step`; listeners hear that the previous step ended. */
  set step(step: Step) {
    const ended = this.#step;
    this.#step = step;
    if (ended !== step) for (const listener of this.#stepListeners) listener(ended);
  }

  get step(): Step {
    return this.#step;
  }

  add(entry: Omit<Entry, 'id' | 'step' | 'atMs' | 'edited'> & { step?: Step }): Entry {
    const full: Entry = { step: this.#step, ...entry, id: this.#entries.length + 1, atMs: Math.round(performance.now()), edited: false };
    this.#entries.push(full);
    this.#notify(full);
    return full;
  }

  update(id: number, messages: Message[]): Entry | undefined {
    const entry = this.#entries.find((e) => e.id === id);
    if (!entry) return undefined;
    entry.messages = messages;
    entry.edited = !entry.pending;
    entry.pending = false;
    this.#notify(entry);
    return entry;
  }

  remove(id: number): void {
    const entry = this.#entries.find((e) => e.id === id);
    if (!entry) return;
    entry.removed = true;
    this.#notify(entry);
  }

  get(id: number): Entry | undefined {
    return this.#entries.find((e) => e.id === id);
  }

  entries(): readonly Entry[] {
    return this.#entries;
  }

  /** Calls `listener` with the step that ended, each time another begins. */
  onStepEnd(listener: (ended: Step) => void): void {
    this.#stepListeners.add(listener);
  }

  /** Calls `listener` with each entry added or updated. */
  onChange(listener: Listener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #notify(entry: Entry): void {
    this.version += 1;
    for (const listener of this.#listeners) listener(entry);
  }
}
