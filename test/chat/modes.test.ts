import { describe, expect, it } from 'vitest';
import { helpText, parseDetectCommand, parseModeSetting } from '../../adapters/chat/modes.ts';

describe('parseDetectCommand', () => {
  it('reads a leading lower-case mode, and the bracketed and mode: forms in any case', () => {
    expect(parseDetectCommand('legal The party of the first part', 'general')).toEqual({
      kind: 'detect',
      mode: 'legal',
      explicitMode: true,
      text: 'The party of the first part',
    });
    expect(parseDetectCommand('academic  An essay\nwith lines', 'general')).toEqual({
      kind: 'detect',
      mode: 'academic',
      explicitMode: true,
      text: 'An essay\nwith lines',
    });
    expect(parseDetectCommand('[Financial] Q3 results', 'general')).toMatchObject({ mode: 'financial', text: 'Q3 results' });
    expect(parseDetectCommand('MODE:legal Terms apply', 'general')).toMatchObject({ mode: 'legal', text: 'Terms apply' });
  });

  it('reads a mode word in any case: `/detect Academic <text>` is an academic check (issue 32, item 10)', () => {
    expect(parseDetectCommand('Academic The essay argues that trade shaped the region.', 'general')).toEqual({
      kind: 'detect',
      mode: 'academic',
      explicitMode: true,
      text: 'The essay argues that trade shaped the region.',
    });
    expect(parseDetectCommand('LEGAL The party of the first part', 'general')).toMatchObject({ mode: 'legal', explicitMode: true });
    // The reply names the mode it used, so a text that starts with a mode's name shows what happened.
    expect(parseDetectCommand('General Motors announced results today.', 'academic')).toMatchObject({
      mode: 'general',
      explicitMode: true,
      text: 'Motors announced results today.',
    });
    expect(parseDetectCommand('Legal', 'general')).toEqual({ kind: 'help' });
  });

  it('uses the default mode when the first word is not one', () => {
    expect(parseDetectCommand('Generally speaking this is fine', 'academic')).toEqual({
      kind: 'detect',
      mode: 'academic',
      explicitMode: false,
      text: 'Generally speaking this is fine',
    });
  });

  it('asks for help on empty input, help, or a lone mode', () => {
    for (const input of ['', '   ', 'help', 'HELP', '--help', '?', 'legal', '[Academic]', 'mode:financial']) {
      expect(parseDetectCommand(input, 'general')).toEqual({ kind: 'help' });
    }
    expect(parseDetectCommand('help me write this', 'general')).toMatchObject({ kind: 'detect', text: 'help me write this' });
  });
});

describe('parseModeSetting', () => {
  it('accepts modes, defaults when blank, and names the variable on a typo', () => {
    expect(parseModeSetting(' Legal ', 'X')).toBe('legal');
    expect(parseModeSetting(undefined, 'X')).toBe('general');
    expect(parseModeSetting('', 'X', 'academic')).toBe('academic');
    expect(() => parseModeSetting('legl', 'SLACK_DEFAULT_MODE')).toThrow(
      'SLACK_DEFAULT_MODE="legl" is not a mode; use one of: general, academic, financial, legal.',
    );
  });
});

describe('helpText', () => {
  it('shows the command, the default mode, every mode and the message action', () => {
    const help = helpText({ command: '/detect', defaultMode: 'legal', messageAction: 'Check for AI text' });
    expect(help).toContain('`/detect <text>` checks the text in the default mode (legal).');
    for (const m of ['general', 'academic', 'financial', 'legal']) expect(help).toContain(`\`${m}\``);
    expect(help).toContain('“Check for AI text”');
  });
});
