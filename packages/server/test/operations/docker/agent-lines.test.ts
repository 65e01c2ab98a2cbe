import { expect, test } from 'vitest';
import { LineScanner } from '../../../src/computers/docker/agent.js';

const TOKEN = 'a'.repeat(32);

/** Feeds `chunks` to a scanner; answers the output (joined), the fields, and how many output calls. */
function scan(chunks: (string | Buffer)[]) {
  const scanner = new LineScanner(TOKEN);
  const output: Buffer[] = [];
  const fields: string[] = [];
  for (const chunk of chunks)
    scanner.push(
      typeof chunk === 'string' ? Buffer.from(chunk, 'latin1') : chunk,
      (bytes) => output.push(Buffer.from(bytes)),
      (field) => fields.push(field),
    );
  return { output: Buffer.concat(output).toString('latin1'), fields };
}

const whole = `\x1e${TOKEN} +\nhi\nno newline\x1e not a line\x1e${TOKEN} 0\n`;

test('the agent lines are taken out of the output, whole or split at any byte', () => {
  expect(scan([whole])).toEqual({ output: 'hi\nno newline\x1e not a line', fields: ['+', '0'] });
  for (let cut = 1; cut < whole.length; cut++)
    expect(scan([whole.slice(0, cut), whole.slice(cut)])).toEqual(scan([whole]));
  expect(scan([...whole])).toEqual(scan([whole]));
});

test('output is handed on as it comes: only a tail that could start an agent line waits', () => {
  const scanner = new LineScanner(TOKEN);
  const heard: string[] = [];
  const push = (text: string) =>
    scanner.push(
      Buffer.from(text, 'latin1'),
      (bytes) => heard.push(Buffer.from(bytes).toString('latin1')),
      () => {},
    );
  push('first\n');
  expect(heard).toEqual(['first\n']);
  push(`x\x1e${TOKEN.slice(0, 5)}`);
  expect(heard).toEqual(['first\n', 'x']);
  push('z'); // not the token after all: released
  expect(heard.join('')).toBe(`first\nx\x1e${TOKEN.slice(0, 5)}z`);
});

test('a line of the token that never ends is not held past a bound: an empty field says so', () => {
  const { output, fields } = scan([`\x1e${TOKEN} ${'9'.repeat(100)}`]);
  expect(fields).toEqual(['']);
  expect(output).toBe(`\x1e${TOKEN} ${'9'.repeat(100)}`);
});
