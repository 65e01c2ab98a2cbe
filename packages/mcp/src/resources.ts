import type { Resource } from '@modelcontextprotocol/sdk/types.js';
import type { OpenApiDocument } from '@svc/contract';
import type { Catalog } from './catalog.js';
import { inlineRefs } from './schema.js';
import { strictSchema } from './strict.js';

/** The guide: the server's instructions (conventions, errors, shared notes) as a resource. */
export const GUIDE_URI = 'svc://guide';
const SCHEMA_PREFIX = 'svc://schemas/';

function schemaNames(document: OpenApiDocument): string[] {
  return Object.keys((document.components?.schemas ?? {}) as Record<string, unknown>);
}

/**
 * The resources: the guide, and every shared schema of the spec as `svc://schemas/<Name>` (JSON
 * Schema, `$ref`s inlined), which the compact tools name by `title` instead of repeating.
 *
 * @example
 * import { loadDocument } from '@svc/contract';
 * resourceList(loadDocument()).map((r) => r.uri); // ["svc://guide", "svc://schemas/Computer", …]
 */
export function resourceList(document: OpenApiDocument): Resource[] {
  return [
    {
      uri: GUIDE_URI,
      name: 'guide',
      title: 'How to use these tools',
      description: 'Conventions, the error envelope and codes, and the notes the tools cite as [N#].',
      mimeType: 'text/markdown',
    },
    ...schemaNames(document).map((name) => ({
      uri: `${SCHEMA_PREFIX}${name}`,
      name,
      title: `${name} schema`,
      mimeType: 'application/schema+json',
    })),
  ];
}

/**
 * The contents of one resource, or undefined for an unknown URI.
 *
 * @example
 * readResource(catalog, 'svc://schemas/Computer')?.text; // '{"type":"object",…}'
 */
export function readResource(catalog: Catalog, uri: string) {
  if (uri === GUIDE_URI) return { uri, mimeType: 'text/markdown', text: catalog.instructions };
  if (!uri.startsWith(SCHEMA_PREFIX)) return undefined;
  const name = uri.slice(SCHEMA_PREFIX.length);
  if (!schemaNames(catalog.document).includes(name)) return undefined;
  const schema = strictSchema(inlineRefs(catalog.document, { $ref: `#/components/schemas/${name}` }));
  return { uri, mimeType: 'application/schema+json', text: JSON.stringify(schema) };
}
