import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { OpenApiDocument } from '@svc/contract';
import { impliedBounds } from './pattern-length.js';
import type { JsonSchema } from './schema.js';
import { shallowOutputSchema } from './shallow-output.js';
import type { ToolDefinition } from './tools.js';

/**
 * Text the spec repeats across many operations, stated once in the server's instructions instead of
 * in every tool: whole sentences of operation descriptions (cited in a tool as `[N3]`), long
 * parameter descriptions (a tool keeps their first sentence), and the descriptions of parameters most
 * tools take (`workspace`, `idempotency_key`: a tool leaves them out). Derived from the tools, never
 * typed here.
 */
export interface Glossary {
  /** Sentence → its note id (`N1`, `N2`, …), in order of first appearance. */
  notes: Map<string, string>;
  /** Long or widely shared parameter description → the argument name it is listed under. */
  parameters: Map<string, string>;
  /** The parameter descriptions of {@link parameters} that tools leave out altogether. */
  omitted: Set<string>;
}

/** A sentence is a note when this many tools or more repeat it, and it is at least this long. */
const NOTE_MIN_TOOLS = 2;
const NOTE_MIN_LENGTH = 40;
/** A parameter description is listed once when this many tools or more repeat it and it is this long. */
const PARAMETER_MIN_TOOLS = 2;
const PARAMETER_MIN_LENGTH = 100;
/** A tool keeps the first sentence of such a description when it is this short or shorter. */
const FIRST_SENTENCE_MAX = 80;
/** A parameter description this many tools or more repeat is listed once and left out of the tools. */
const OMIT_MIN_TOOLS = 8;

/** Sentences of a description, whitespace folded (YAML folds lines at 100 columns; that is not meaning). */
export function sentences(text: string): string[] {
  const folded = text.replace(/\s+/g, ' ').trim();
  return folded === '' ? [] : folded.split(/(?<=[.!?])\s+(?=[A-Z`(*])/);
}

function countBy<T>(items: Iterable<T>): Map<T, number> {
  const counts = new Map<T, number>();
  for (const item of items) counts.set(item, (counts.get(item) ?? 0) + 1);
  return counts;
}

function descriptionsOf(schema: unknown, found: string[]): string[] {
  if (Array.isArray(schema)) for (const item of schema) descriptionsOf(item, found);
  else if (typeof schema === 'object' && schema !== null)
    for (const [key, value] of Object.entries(schema)) {
      if (key === 'description' && typeof value === 'string') found.push(value);
      else descriptionsOf(value, found);
    }
  return found;
}

/**
 * The repeated text of a set of tools (see {@link Glossary}). Built from every tool, whatever subset a
 * client lists, so note ids do not change with the toolsets chosen.
 *
 * @example
 * import { loadDocument } from '@svc/contract';
 * import { buildTools } from './tools.js';
 * const glossary = buildGlossary(buildTools(loadDocument()));
 */
export function buildGlossary(tools: readonly ToolDefinition[]): Glossary {
  const sentenceCounts = countBy(
    tools.flatMap((tool) => [...new Set(sentences(tool.operation.description))]),
  );
  const notes = new Map<string, string>();
  for (const tool of tools)
    for (const sentence of sentences(tool.operation.description)) {
      const count = sentenceCounts.get(sentence) ?? 0;
      if (count >= NOTE_MIN_TOOLS && sentence.length >= NOTE_MIN_LENGTH && !notes.has(sentence))
        notes.set(sentence, `N${notes.size + 1}`);
    }
  // Counted per occurrence: a map's key and value schemas (labels) repeat one text within a tool.
  const parameterCounts = new Map<string, { count: number; name: string }>();
  for (const tool of tools)
    for (const [name, schema] of Object.entries(tool.inputSchema.properties as Record<string, JsonSchema>))
      for (const text of descriptionsOf(schema, [])) {
        const seen = parameterCounts.get(text);
        parameterCounts.set(text, { count: (seen?.count ?? 0) + 1, name: seen?.name ?? name });
      }
  const parameters = new Map<string, string>();
  const omitted = new Set<string>();
  for (const [text, { count, name }] of parameterCounts) {
    if (count >= OMIT_MIN_TOOLS) omitted.add(text);
    if (count >= OMIT_MIN_TOOLS || (count >= PARAMETER_MIN_TOOLS && text.length >= PARAMETER_MIN_LENGTH))
      parameters.set(text, name);
  }
  return { notes, parameters, omitted };
}

/** What the spec's vendor extensions, left out of compact schemas, mean to a caller. */
export const EXTENSIONS_NOTE =
  'Enums in results may gain values within v1: treat an unknown value as "other", never as an error.';

/** The glossary as the instructions' sections: notes by id, then parameters by name. */
export function glossaryText(glossary: Glossary): string {
  const notes = [...glossary.notes].map(([text, id]) => `[${id}] ${text}`);
  const parameters = [...glossary.parameters].map(
    ([text, name]) => `- \`${name}\`: ${sentences(text).join(' ')}`,
  );
  return [
    EXTENSIONS_NOTE,
    '',
    'Notes cited in tool descriptions as [N#]:',
    ...notes,
    '',
    'Parameters shared by many tools, in full (a tool gives the first sentence, or nothing for those most tools take):',
    ...parameters,
  ].join('\n');
}

/**
 * A schema with `examples` dropped (the constraints stay, but for length bounds its `pattern` already
 * enforces), whitespace of descriptions folded, and glossary descriptions cut to their first sentence
 * (or left out, for the parameters most tools take).
 */
function compactSchema(schema: unknown, glossary: Glossary): unknown {
  if (Array.isArray(schema)) return schema.map((item) => compactSchema(item, glossary));
  if (typeof schema !== 'object' || schema === null) return schema;
  const out: Record<string, unknown> = {};
  // Length bounds the pattern already enforces (`^[a-z0-9]…{0,61}…$` is 1 to 63 characters) say nothing more.
  const implied = new Set<string>(impliedBounds(schema as Record<string, unknown>));
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'examples' || implied.has(key)) continue;
    // Vendor extensions (`x-svc-accepts`, `x-extensible-enum`) are for the spec's tools; what they mean
    // to an agent is said once in the instructions (EXTENSIONS_NOTE).
    if (key.startsWith('x-')) continue;
    // `format` of an integer (int32, int64) only annotates in JSON Schema 2020-12, and the bounds beside it say more.
    if (key === 'format' && (schema as { type?: unknown }).type === 'integer') continue;
    if (key === 'description' && typeof value === 'string' && glossary.omitted.has(value)) continue;
    if (key === 'description' && typeof value === 'string' && glossary.parameters.has(value)) {
      const first = sentences(value)[0] ?? '';
      out[key] = first.length <= FIRST_SENTENCE_MAX ? first : 'See the instructions.';
    } else if (key === 'description' && typeof value === 'string') out[key] = sentences(value).join(' ');
    else out[key] = compactSchema(value, glossary);
  }
  return out;
}

/**
 * The operation's description with glossary sentences cited by note id. The route (`API: GET …`) of
 * the full mode is left out: a tool is called by name, and `list_api_endpoints` and the full mode
 * show it.
 */
function compactDescription(tool: ToolDefinition, glossary: Glossary): string {
  // The screen tool's text is its own (the computer-use actions), not an operation's.
  if (tool.screen) return tool.description;
  const described = sentences(tool.operation.description)
    .map((sentence) => {
      const id = glossary.notes.get(sentence);
      return id ? `[${id}]` : sentence;
    })
    .join(' ');
  // A file tool's content and limit, and a terminal tool's keys and screen as text, are the tool's own,
  // not the spec's: said in every mode.
  const note = tool.file?.note ?? tool.terminal?.note;
  return note ? `${described} ${note}` : described;
}

/**
 * The `tools/list` entry of a tool in the compact (default) mode: the same title, annotations and
 * input constraints as the full entry, the spec's description with shared sentences cited as notes,
 * parameter descriptions repeated across tools cut to their first sentence (left out when most tools
 * repeat them), no `examples`, and the
 * shallow output schema (shared schemas by name). Everything cut is in the instructions or resources.
 *
 * @example
 * import { loadDocument } from '@svc/contract';
 * import { buildTools } from './tools.js';
 * const doc = loadDocument();
 * const tools = buildTools(doc);
 * const entry = compactListing(doc, tools[0]!, buildGlossary(tools));
 */
export function compactListing(document: OpenApiDocument, tool: ToolDefinition, glossary: Glossary): Tool {
  // A stream tool's output is its own (a window of events), already small; the rest are the spec's bodies.
  const output =
    tool.stream || tool.file?.direction === 'read' || tool.screen || tool.terminal?.kind === 'keys'
      ? tool.outputSchema
      : shallowOutputSchema(document, tool.operation, tool.readBack?.operation);
  return {
    name: tool.name,
    title: tool.title,
    description: compactDescription(tool, glossary),
    inputSchema: compactSchema(tool.inputSchema, glossary) as Tool['inputSchema'],
    ...(output ? { outputSchema: compactSchema(output, glossary) as Tool['outputSchema'] } : {}),
    // Whole, as in the full mode: every hint stated (a client that does not apply MCP's defaults for
    // absent hints would take a read for destructive), and `annotations.title` for clients of
    // protocol versions before the tool's own `title` (2025-06-18).
    annotations: tool.annotations,
  };
}
