// The README's console blocks as a test's input: the commands a reader types and what the README says
// they print, and the rule that decides whether a run printed the same.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The repository's README.md. */
export const README = fileURLToPath(new URL('../../../../README.md', import.meta.url));

/** One `$ ` line of a console block and the lines the README shows under it. */
export interface ConsoleStep {
  /** The command as typed, without its `$ `. */
  command: string;
  /** The output lines shown, up to the next `$ ` line or the block's end. */
  output: string[];
  /** Its line in README.md (1-based), for failure messages. */
  line: number;
}

/** A marked console block: the marker's line as written (it may say more, e.g. what the block needs) and its steps. */
export interface ConsoleBlock {
  marker: string;
  steps: ConsoleStep[];
}

/**
 * Every ```` ```console ```` block that follows a line holding `marker` (an HTML comment in the README,
 * invisible when rendered), in order. Throws when the marker names no block.
 *
 * @example
 * const blocks = consoleSteps(readFileSync(README, 'utf8'), 'run as written by test/installed/readme.test.ts');
 */
export function consoleSteps(markdown: string, marker: string): ConsoleBlock[] {
  const lines = markdown.split('\n');
  const blocks: ConsoleBlock[] = [];
  for (let at = 0; at < lines.length; at++) {
    if (!lines[at]?.includes(marker)) continue;
    const open = lines.findIndex((line, i) => i > at && line.startsWith('```'));
    if (open < 0 || lines[open] !== '```console')
      throw new Error(`README.md:${at + 1}: the marker is not followed by a \`\`\`console block`);
    const steps: ConsoleStep[] = [];
    for (let i = open + 1; i < lines.length && lines[i] !== '```'; i++) {
      const line = lines[i] as string;
      if (line.startsWith('$ ')) steps.push({ command: line.slice(2), output: [], line: i + 1 });
      else if (steps.length === 0) throw new Error(`README.md:${i + 1}: output before the first $ line`);
      else steps.at(-1)?.output.push(line);
    }
    blocks.push({ marker: (lines[at] as string).trim(), steps });
  }
  if (blocks.length === 0) throw new Error(`README.md has no line with ${marker}`);
  return blocks;
}

/** {@link consoleSteps} of README.md as it is on disk. */
export function readmeSteps(marker: string): ConsoleBlock[] {
  return consoleSteps(readFileSync(README, 'utf8'), marker);
}

const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Whether `printed` (the run's stdout and stderr as one text, in the order written) is what the README
 * shows, `shown`. The rule, line by line:
 *
 * - a line is the same line, character for character, except that
 * - an id (anything `idPattern` matches, the spec's `Id`) matches any other id: ids are new on every run;
 * - `…` inside a line stands for any text within that line (a host's kernel version, a size);
 * - a line that is only `…` stands for any number of whole lines, none included.
 *
 * Trailing blank lines of either side are ignored. Returns `undefined` when they match, else the first
 * README line that matched nothing, as a message.
 *
 * @example
 * matchOutput(['Linux box-1 … GNU/Linux'], 'Linux box-1 6.12.0 x86_64 GNU/Linux\n', /[0-9a-z]{27}/); // undefined
 */
export function matchOutput(
  shown: readonly string[],
  printed: string,
  idPattern: RegExp,
): string | undefined {
  const ids = new RegExp(`\\b${idPattern.source.replace(/^\^|\$$/g, '')}\\b`, 'g');
  const trim = (lines: string[]) => {
    while (lines.length > 0 && lines.at(-1)?.trim() === '') lines.pop();
    return lines;
  };
  const want = trim([...shown]);
  const got = trim(printed.split('\n')).map((line) => line.replace(ids, '\0'));
  const patterns = want.map((line) =>
    line === '…'
      ? undefined
      : new RegExp(
          `^${line
            .replace(ids, '\0')
            .split('…')
            .map((part) => literal(part))
            .join('.*')}$`,
        ),
  );
  // Whether want[i…] matches got[j…]: a plain walk, with backtracking only at whole-line `…`.
  const from = (i: number, j: number): boolean => {
    if (i === want.length) return j === got.length;
    const pattern = patterns[i];
    if (pattern === undefined) {
      for (let k = j; k <= got.length; k++) if (from(i + 1, k)) return true;
      return false;
    }
    return j < got.length && pattern.test(got[j] as string) && from(i + 1, j + 1);
  };
  if (from(0, 0)) return undefined;
  // The first README line no prefix of the output matches, for the message.
  let i = 0;
  while (
    i < want.length &&
    patterns[i] !== undefined &&
    i < got.length &&
    patterns[i]?.test(got[i] as string)
  )
    i++;
  return `README line ${i + 1} of this output, ${JSON.stringify(want[i] ?? '(end)')}, does not match ${JSON.stringify(got[i]?.replaceAll('\0', '<id>') ?? '(no more output)')}`;
}
