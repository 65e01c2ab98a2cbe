import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// The repository explains itself: no file cites a document that lives outside it, and no file names a
// path of the machine it was written on. The conventions and design it relies on are in docs/.
const root = fileURLToPath(new URL('../..', import.meta.url));
const files = execFileSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8' })
  .split('\0')
  .filter((file) => file && !file.endsWith('pnpm-lock.yaml') && !file.startsWith('spec/released/'));

const FORBIDDEN: [string, RegExp][] = [
  ['a design brief outside the repository', /\bAPI\.md\b/],
  ['a style guide outside the repository', /\bSTYLE\.md\b/],
  ['the published conventions by their outside file name', /\bPUBLISHED(\.md)?\b/],
  ['a sibling folder of the repository', /\.\.\/shared\//],
  ['a path of the machine it was written on', /\/work\/|\/root\//],
];

describe('the repository cites only itself', () => {
  it.each(FORBIDDEN)('no tracked file names %s', (_what, pattern) => {
    const hits: string[] = [];
    for (const file of files) {
      let text: string;
      try {
        text = readFileSync(`${root}/${file}`, 'utf8');
      } catch {
        continue;
      }
      text.split('\n').forEach((line, index) => {
        if (pattern.test(line) && !line.includes('self-contained.test'))
          hits.push(`${file}:${index + 1}: ${line.trim()}`);
      });
    }
    expect(hits).toEqual([]);
  });
});
