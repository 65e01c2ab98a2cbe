// A body field that is neither a word, a number nor a key=value map is given as JSON (`--lifetime
// '{"idle_timeout_seconds":1800}'`). Its help lists its fields and an example, both from the spec, and a
// value that is not JSON, or not of the schema, is refused before any request with the flag named.
import type { OpenApiDocument } from '@svc/contract';
import { deref } from '@svc/contract';
import { CliError } from '../exit-codes.js';
import type { OptionSpec } from './commands.js';
import { shellWord } from './routes.js';
import { firstLine } from './schema.js';
import { expected, fieldsOf, placeIn, problemOf } from './words.js';

/**
 * An example value of a JSON option: the first the operation's request examples give it, else its
 * schema's own, else one made of its fields' examples. Undefined when the spec has none.
 *
 * @example
 * jsonExample(document, lifetimeOption); // { idle_timeout_seconds: 1800, expires_at: '2026-11-10T18:00:00Z', on_end: 'delete' }
 */
export function jsonExample(document: OpenApiDocument, option: OptionSpec): unknown {
  if (option.examples?.length) return option.examples[0];
  return exampleOfSchema(document, option.schema);
}

function exampleOfSchema(document: OpenApiDocument, raw: unknown): unknown {
  const schema = deref(document, raw);
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  if (Array.isArray(schema.enum)) return schema.enum.find((v) => v !== null);
  const fields = Object.entries(fieldsOf(document, schema))
    .map(([name, field]) => [name, exampleOfSchema(document, field)] as const)
    .filter(([, value]) => value !== undefined);
  return fields.length > 0 ? Object.fromEntries(fields) : undefined;
}

/** `--lifetime '{"idle_timeout_seconds":1800}'`: the flag with an example, as typed in a shell. */
function exampleLine(document: OpenApiDocument, option: OptionSpec): string | undefined {
  const example = jsonExample(document, option);
  return example === undefined ? undefined : `--${option.flag} ${shellWord(JSON.stringify(example))}`;
}

const wrap = (text: string, indent: number, width = 100): string => {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line && indent + line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines.join(`\n${' '.repeat(indent)}`);
};

/**
 * The `--help` section of a JSON option: what it is, each field with what it must be and what it means,
 * and an example.
 *
 * @example
 * command.addHelpText('after', jsonHelp(document, lifetimeOption));
 */
export function jsonHelp(document: OpenApiDocument, option: OptionSpec): string {
  const schema = deref(document, option.schema);
  const fields = Object.entries(fieldsOf(document, schema));
  const lines: string[] = [];
  if (fields.length > 0) {
    lines.push(`--${option.flag} <json> is a JSON object with these fields (each optional unless said):`);
    const required = new Set((schema.required ?? []) as string[]);
    const width = Math.max(...fields.map(([name]) => name.length));
    for (const [name, field] of fields) {
      const meaning = firstLine(field.description);
      const text = `${required.has(name) ? 'required: ' : ''}${expected(document, field, name)}.${meaning ? ` ${meaning}` : ''}`;
      lines.push(`  ${name.padEnd(width)}  ${wrap(text, width + 4)}`);
    }
  } else lines.push(wrap(`--${option.flag} <json> is JSON: ${expected(document, schema, option.name)}.`, 0));
  const example = exampleLine(document, option);
  if (example) lines.push(`  for example: ${example}`);
  return `\n${lines.join('\n')}\n`;
}

/**
 * The commander parser of a JSON option: the parsed value when it is JSON and of the schema, else a
 * usage error that names the flag and says where the text failed or which field is wrong, with the
 * example, and not the whole help. `command` is how to type the command (`svc computers create`).
 *
 * @example
 * new Option('--lifetime <json>').argParser(parseJsonFlag(document, option, 'svc computers create'));
 */
export function parseJsonFlag(
  document: OpenApiDocument,
  option: OptionSpec,
  command: string,
): (text: string) => unknown {
  return (text) => {
    const example = exampleLine(document, option);
    const more = `${example ? `\n  for example: ${example}` : ''}\n  more: ${command} --help`;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      const reason = (error as Error).message
        .replace(/ in JSON/, '')
        .replace(/ \(line \d+ column \d+\)$/, '');
      const at = Number(/position (\d+)/.exec(reason)?.[1] ?? text.length);
      const line = text.replace(/[\r\n\t]/g, ' ');
      throw new CliError(
        'usage',
        'invalid_json',
        `--${option.flag} is not valid JSON (${reason}):\n  ${line}\n  ${' '.repeat(at)}^${more}`,
      );
    }
    const problem = problemOf(document, option.schema, value, option.name);
    if (problem) {
      const where = problem.at.length > 0 ? `${placeIn(problem.at)} ` : '';
      throw new CliError('usage', 'invalid_value', `--${option.flag}: ${where}${problem.says}${more}`);
    }
    return value;
  };
}
