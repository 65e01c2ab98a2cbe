import { describe, expect, it } from 'vitest';
import { successResult, summarize } from '../src/results.js';

describe('summarize', () => {
  it.each<[unknown, string]>([
    [{ computers: [{}, {}], next_cursor: null, has_more: false }, '2 computers.'],
    [{ computer: { id: 'c1', name: 'box', state: 'running' } }, 'computer box (c1), running.'],
    [{ execution: { exit_code: 0, stdout: 'hi\n', timed_out: false } }, 'execution, exit code 0.'],
    [{ execution: { exit_code: 124, stdout: '', timed_out: true } }, 'execution, exit code 124 (timed out).'],
    [undefined, 'Done.'],
  ])('%j → %s', (body, line) => {
    expect(summarize(body)).toBe(line);
  });

  it('a result carries the summary, then the whole answer as JSON text, and as structuredContent', () => {
    const body = { execution: { exit_code: 1, stdout: 'out', timed_out: false } };
    expect(successResult(body)).toEqual({
      content: [
        { type: 'text', text: 'execution, exit code 1.' },
        { type: 'text', text: JSON.stringify(body) },
      ],
      structuredContent: body,
    });
  });
});
