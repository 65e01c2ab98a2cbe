import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { loadDocument, type OpenApiDocument } from '@svc/contract';
import { buildGlossary, compactListing, type Glossary, glossaryText } from './compact.js';
import { dynamicTools } from './dynamic.js';
import { buildTools, type ToolDefinition } from './tools.js';
import { DEFAULT_TOOLSETS, parseToolsets, TOOLSET_KEYWORDS } from './toolsets.js';

/**
 * How tools are offered:
 * - `compact` (default): every selected operation as a tool, shared text and schemas stated once;
 * - `full`: the same tools with the spec's whole text and full output schemas;
 * - `dynamic`: three tools that list, describe and call the selected operations.
 */
export type ToolMode = 'compact' | 'full' | 'dynamic';

/** The modes, for parsing and documentation. */
export const TOOL_MODES: readonly ToolMode[] = ['compact', 'full', 'dynamic'];

/**
 * Which operations a session gets, and how. `toolsets` are names from {@link Catalog.toolsets};
 * absent = {@link DEFAULT_TOOLSETS}.
 */
export interface ToolSelection {
  mode: ToolMode;
  toolsets?: readonly string[] | undefined;
}

/** Everything derived once from the spec: tools, toolsets, the glossary, the instructions. */
export interface Catalog {
  document: OpenApiDocument;
  tools: readonly ToolDefinition[];
  byName: ReadonlyMap<string, ToolDefinition>;
  /**
   * The toolsets a client may choose (`toolsets.ts`): spec tags that have tools, in the document's
   * order, each derived one (`files`, `streams`) after the tag of its first tool.
   */
  toolsets: readonly string[];
  /** The toolsets of a selection that names none. */
  defaultToolsets: readonly string[];
  glossary: Glossary;
  /** The server's `instructions`: conventions, toolsets, errors and the glossary, said once for every tool. */
  instructions: string;
  /** The selected operations' tools (whatever the mode). */
  selected(selection: ToolSelection): ToolDefinition[];
  /** The `tools/list` answer for a selection (cached). */
  list(selection: ToolSelection): Tool[];
}

/** The `tools/list` entry of a tool in the `full` mode. */
export function fullListing(tool: ToolDefinition): Tool {
  return {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: tool.inputSchema as Tool['inputSchema'],
    ...(tool.outputSchema ? { outputSchema: tool.outputSchema as Tool['outputSchema'] } : {}),
    annotations: tool.annotations,
  };
}

function instructionsFor(
  document: OpenApiDocument,
  toolsets: readonly string[],
  defaults: readonly string[],
  tools: readonly ToolDefinition[],
  glossary: Glossary,
) {
  const errorCodes = (document.components?.schemas?.ErrorCode as { description?: string } | undefined)
    ?.description;
  const counts = toolsets.map((set) => `${set} (${tools.filter((t) => t.toolset === set).length})`);
  return [
    `Tools for the ${document.info.title} ${document.info.version}: one per API operation, named after its operationId in snake_case, in toolsets (by spec tag; \`files\` and \`streams\` by what they act on): ${counts.join(', ')}.`,
    `Listed unless the client chose others: ${defaults.join(', ')}. A tool of another toolset is unknown until the client adds it: \`?toolsets=default,webhooks\` or \`?toolsets=all\` on the /mcp URL, \`--toolsets\` or SVC_MCP_TOOLSETS for stdio.`,
    'Resources are addressed by id or name. In output schemas, an object with a `title` is the shared schema of that name: read the resource `svc://schemas/<title>` for its fields.',
    'Errors: a refused call is a result with isError, the text `Error <status> <code>: <message> (request_id <id>)`, and the error envelope {"error": {"code", "message", "details", "request_id"}} as JSON text (schema: `svc://schemas/Error`). Branch on `code`; quote the request_id.',
    errorCodes ?? '',
    'Long-running tools (they take `wait`) wait for their operations by default, send progress notifications when the call carries a progressToken, and return the resource with its operations in their final state.',
    '',
    glossaryText(glossary),
  ].join('\n');
}

/**
 * Derives the catalog from the bundled spec, once per process: the tools, the toolsets, the glossary
 * of repeated text, the instructions, and a cache of `tools/list` answers per selection.
 *
 * @example
 * import { loadDocument } from '@svc/contract';
 * const catalog = buildCatalog(loadDocument());
 * catalog.list({ mode: 'compact', toolsets: ['computers'] }).length; // 10
 */
export function buildCatalog(
  document: OpenApiDocument,
  tools: readonly ToolDefinition[] = buildTools(document),
): Catalog {
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  const declared = ((document.tags as { name: string }[] | undefined) ?? []).map((tag) => tag.name);
  const firstTag = (set: string) =>
    ((tools.find((tool) => tool.toolset === set)?.operation.operation.tags as string[] | undefined) ?? [])[0];
  const present = [...new Set(tools.map((tool) => tool.toolset))];
  const derived = present.filter((set) => !declared.includes(set));
  const toolsets = declared
    .filter((tag) => present.includes(tag))
    .flatMap((tag) => [tag, ...derived.filter((set) => firstTag(set) === tag)]);
  toolsets.push(...derived.filter((set) => !toolsets.includes(set)));
  const defaultToolsets = DEFAULT_TOOLSETS.filter((set) => toolsets.includes(set));
  const glossary = buildGlossary(tools);
  const cache = new Map<string, Tool[]>();
  const chosenSets = (selection: ToolSelection) => selection.toolsets ?? defaultToolsets;
  const selected = (selection: ToolSelection) =>
    tools.filter((tool) => chosenSets(selection).includes(tool.toolset));
  const catalog: Catalog = {
    document,
    tools,
    byName,
    toolsets,
    defaultToolsets,
    glossary,
    instructions: instructionsFor(document, toolsets, defaultToolsets, tools, glossary),
    selected,
    list(selection) {
      const key = `${selection.mode}:${chosenSets(selection).join(',')}`;
      let listed = cache.get(key);
      if (!listed) {
        const chosen = selected(selection);
        listed =
          selection.mode === 'dynamic'
            ? dynamicTools(
                chosen,
                toolsets.filter((set) => chosenSets(selection).includes(set)),
              )
            : chosen.map((tool) =>
                selection.mode === 'full' ? fullListing(tool) : compactListing(document, tool, glossary),
              );
        cache.set(key, listed);
      }
      return listed;
    },
  };
  return catalog;
}

/**
 * Reads a selection from text (the `/mcp` query or `svc mcp` flags): `mode` one of {@link TOOL_MODES}
 * (default `compact`), `toolsets` a comma list of toolsets, `all`, or `default` (the default set, also
 * what an empty or absent list means; `default,webhooks` adds to it). Returns the problem instead when
 * a value is unknown, naming the accepted ones.
 *
 * @example
 * parseSelection(catalog, { mode: 'dynamic', toolsets: 'computers,operations' });
 */
export function parseSelection(
  catalog: Pick<Catalog, 'toolsets' | 'defaultToolsets'>,
  input: { mode?: string | null | undefined; toolsets?: string | null | undefined },
): { ok: true; selection: ToolSelection } | { ok: false; field: string; description: string } {
  const mode = (input.mode ?? '').trim() || 'compact';
  if (!TOOL_MODES.includes(mode as ToolMode))
    return { ok: false, field: 'mode', description: `must be one of ${TOOL_MODES.join(', ')}` };
  const parsed = parseToolsets(catalog.toolsets, input.toolsets, catalog.defaultToolsets);
  if (!parsed.ok)
    return {
      ok: false,
      field: 'toolsets',
      description: `unknown toolset ${parsed.unknown.join(', ')}; known: ${catalog.toolsets.join(', ')}; or ${TOOLSET_KEYWORDS.all}, ${TOOLSET_KEYWORDS.default}`,
    };
  return { ok: true, selection: { mode: mode as ToolMode, toolsets: parsed.toolsets } };
}

/** An unknown mode or toolset, named in `field` (`mode` or `toolsets`). */
export class ToolSelectionError extends Error {
  override name = 'ToolSelectionError';
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

/** The environment variable `svc-mcp` and `svc mcp` read the toolsets from when no flag names them. */
export const TOOLSETS_ENV = 'SVC_MCP_TOOLSETS';

/**
 * The catalog of the bundled spec and a selection read from text, for entry points that take flags
 * (`svc mcp --toolsets computers --mode dynamic`); without `toolsets`, the toolsets come from
 * `SVC_MCP_TOOLSETS` in `env` (the flag wins, being the more specific). Throws
 * {@link ToolSelectionError} on an unknown value, naming where it came from.
 *
 * @example
 * const { catalog, selection } = selectTools({ toolsets: 'computers', mode: 'compact' });
 * await runStdio({ client, catalog, selection });
 */
export function selectTools(
  input: { mode?: string | undefined; toolsets?: string | undefined },
  document: OpenApiDocument = loadDocument(),
  env: Readonly<Record<string, string | undefined>> = process.env,
): { catalog: Catalog; selection: ToolSelection } {
  const catalog = buildCatalog(document);
  const fromEnv = input.toolsets === undefined && env[TOOLSETS_ENV] !== undefined;
  const parsed = parseSelection(catalog, {
    mode: input.mode,
    toolsets: fromEnv ? env[TOOLSETS_ENV] : input.toolsets,
  });
  if (!parsed.ok) {
    const source = parsed.field === 'toolsets' && fromEnv ? TOOLSETS_ENV : `--${parsed.field}`;
    throw new ToolSelectionError(parsed.field, `${source}: ${parsed.description}`);
  }
  return { catalog, selection: parsed.selection };
}
