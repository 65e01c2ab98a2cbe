import { readFileSync } from 'node:fs';

/** The parts of an OpenAPI 3.1 document this codebase walks at run time. */
export interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string; description?: string };
  servers?: { url: string; description?: string }[];
  paths: Record<string, Record<string, unknown>>;
  components: Record<string, Record<string, unknown>>;
  [key: string]: unknown;
}

let cached: OpenApiDocument | undefined;

/**
 * The bundled v1 document (spec/dist/openapi.json, copied at build time), parsed once.
 * Node only: browsers never need it.
 *
 * @example
 * import { loadDocument } from '@svc/contract';
 * const doc = loadDocument();
 * console.log(doc.info.version);
 */
export function loadDocument(): OpenApiDocument {
  cached ??= JSON.parse(
    readFileSync(new URL('./generated/openapi.json', import.meta.url), 'utf8'),
  ) as OpenApiDocument;
  return cached;
}
