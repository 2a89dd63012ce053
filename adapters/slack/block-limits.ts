/**
 * Slack's published Block Kit limits, checked before anything is sent: Slack rejects a whole message
 * (`invalid_blocks`) when one field is one character too long, which to a moderator looks like the
 * bot silently ignoring them. The builders in blocks.ts cut their text to these limits; tests run
 * every built payload through `validateBlockKit`.
 */

export const LIMITS = {
  messageBlocks: 50,
  modalBlocks: 100,
  sectionText: 3000,
  sectionFields: 10,
  sectionFieldText: 2000,
  headerText: 150,
  contextElements: 10,
  /** Slack documents no separate context-text limit; the field limit is used to stay safe. */
  contextText: 2000,
  actionsElements: 25,
  buttonText: 75,
  buttonValue: 2000,
  actionId: 255,
  blockId: 255,
  modalTitle: 24,
  modalButton: 24,
  privateMetadata: 3000,
  callbackId: 255,
  /** Top-level `text` of chat.postMessage/postEphemeral; longer is truncated by Slack. */
  messageText: 40_000,
} as const;

export type Surface = 'message' | 'modal';

interface TextObject {
  type?: unknown;
  text?: unknown;
}

function textOf(obj: unknown): string | undefined {
  if (obj && typeof obj === 'object' && typeof (obj as TextObject).text === 'string') return (obj as TextObject).text as string;
  return undefined;
}

/** Counts as Slack does: characters, so an emoji made of two UTF-16 units is one. */
function length(s: string): number {
  return Array.from(s).length;
}

/** Every limit the payload breaks, as readable strings; empty when it is valid. */
export function validateBlockKit(blocks: readonly unknown[], surface: Surface = 'message'): string[] {
  const problems: string[] = [];
  const maxBlocks = surface === 'message' ? LIMITS.messageBlocks : LIMITS.modalBlocks;
  if (blocks.length === 0) problems.push('no blocks');
  if (blocks.length > maxBlocks) problems.push(`${blocks.length} blocks > ${maxBlocks}`);
  const blockIds = new Set<string>();
  const actionIds = new Set<string>();

  const checkText = (where: string, obj: unknown, max: number): void => {
    const text = textOf(obj);
    if (text === undefined) {
      problems.push(`${where}: missing text`);
      return;
    }
    const type = (obj as TextObject).type;
    if (type !== 'plain_text' && type !== 'mrkdwn') problems.push(`${where}: text type ${String(type)}`);
    if (length(text) === 0) problems.push(`${where}: empty text`);
    if (length(text) > max) problems.push(`${where}: ${length(text)} chars > ${max}`);
  };

  blocks.forEach((raw, i) => {
    const block = raw as Record<string, unknown>;
    const where = `blocks[${i}] (${String(block.type)})`;
    if (typeof block.block_id === 'string') {
      if (length(block.block_id) > LIMITS.blockId) problems.push(`${where}: block_id too long`);
      if (blockIds.has(block.block_id)) problems.push(`${where}: duplicate block_id ${block.block_id}`);
      blockIds.add(block.block_id);
    }
    switch (block.type) {
      case 'section': {
        const fields = block.fields as unknown[] | undefined;
        if (block.text === undefined && !fields) problems.push(`${where}: needs text or fields`);
        if (block.text !== undefined) checkText(`${where}.text`, block.text, LIMITS.sectionText);
        if (fields) {
          if (fields.length > LIMITS.sectionFields) problems.push(`${where}: ${fields.length} fields > ${LIMITS.sectionFields}`);
          for (const [j, f] of fields.entries()) checkText(`${where}.fields[${j}]`, f, LIMITS.sectionFieldText);
        }
        break;
      }
      case 'header':
        checkText(`${where}.text`, block.text, LIMITS.headerText);
        if ((block.text as TextObject | undefined)?.type !== 'plain_text') problems.push(`${where}: header text must be plain_text`);
        break;
      case 'context': {
        const elements = (block.elements as unknown[] | undefined) ?? [];
        if (elements.length === 0) problems.push(`${where}: no elements`);
        if (elements.length > LIMITS.contextElements) problems.push(`${where}: ${elements.length} elements > ${LIMITS.contextElements}`);
        for (const [j, e] of elements.entries()) checkText(`${where}.elements[${j}]`, e, LIMITS.contextText);
        break;
      }
      case 'actions': {
        const elements = (block.elements as Record<string, unknown>[] | undefined) ?? [];
        if (elements.length === 0) problems.push(`${where}: no elements`);
        if (elements.length > LIMITS.actionsElements) problems.push(`${where}: ${elements.length} elements > ${LIMITS.actionsElements}`);
        elements.forEach((e, j) => {
          const at = `${where}.elements[${j}]`;
          if (e.type !== 'button') return;
          checkText(`${at}.text`, e.text, LIMITS.buttonText);
          if ((e.text as TextObject | undefined)?.type !== 'plain_text') problems.push(`${at}: button text must be plain_text`);
          if (typeof e.value === 'string' && length(e.value) > LIMITS.buttonValue)
            problems.push(`${at}: value ${length(e.value)} chars > ${LIMITS.buttonValue}`);
          if (typeof e.action_id !== 'string' || length(e.action_id) > LIMITS.actionId) problems.push(`${at}: bad action_id`);
          else if (actionIds.has(e.action_id)) problems.push(`${at}: duplicate action_id ${e.action_id}`);
          else actionIds.add(e.action_id);
        });
        break;
      }
      case 'divider':
        break;
      default:
        problems.push(`${where}: block type not checked by this validator`);
    }
  });
  return problems;
}

/** Validates a modal view: its blocks plus title, buttons, callback_id and private_metadata. */
export function validateModal(view: Record<string, unknown>): string[] {
  const problems = validateBlockKit((view.blocks as unknown[] | undefined) ?? [], 'modal');
  if (view.type !== 'modal') problems.push('view.type must be modal');
  const checkLabel = (name: string, max: number, required: boolean): void => {
    const text = textOf(view[name]);
    if (text === undefined) {
      if (required) problems.push(`view.${name} missing`);
      return;
    }
    if ((view[name] as TextObject).type !== 'plain_text') problems.push(`view.${name} must be plain_text`);
    if (length(text) === 0 || length(text) > max) problems.push(`view.${name}: ${length(text)} chars, limit ${max}`);
  };
  checkLabel('title', LIMITS.modalTitle, true);
  checkLabel('close', LIMITS.modalButton, false);
  checkLabel('submit', LIMITS.modalButton, false);
  if (typeof view.private_metadata === 'string' && length(view.private_metadata) > LIMITS.privateMetadata) {
    problems.push('view.private_metadata too long');
  }
  if (typeof view.callback_id === 'string' && length(view.callback_id) > LIMITS.callbackId) problems.push('view.callback_id too long');
  return problems;
}
