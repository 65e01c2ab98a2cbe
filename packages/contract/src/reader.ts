// What every package asks of an operation, read one way: its parameters, security, request body,
// responses and enums. Pure functions of the document, so the bundle stays the only source.
import type { OpenApiDocument } from './document.js';
import type { OperationInfo } from './operations.js';
import { deref, derefWithRef, type JsonObject, resolveRef } from './refs.js';

/** An OpenAPI parameter object, `$ref` followed. */
export interface Parameter extends JsonObject {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  description?: string;
  /** The parameter's schema as written (nested `$ref`s kept). */
  schema?: JsonObject;
}

/**
 * The parameters of an operation: the path item's, then the operation's, `$ref`s followed. An
 * operation parameter replaces a path-level one with the same location and name (OpenAPI 3.1
 * §4.8.10), keeping its place; header names compare without case (RFC 9110 §5.1).
 *
 * @example
 * import { listOperations, loadDocument, operationParameters } from '@svc/contract';
 * const doc = loadDocument();
 * const op = listOperations(doc).find((o) => o.operationId === 'listComputers');
 * if (op) operationParameters(doc, op).map((p) => `${p.in}:${p.name}`); // ['path:workspace', 'query:limit', …]
 */
export function operationParameters(document: OpenApiDocument, op: OperationInfo): Parameter[] {
  const pathLevel = (document.paths[op.path]?.parameters ?? []) as unknown[];
  const own = (op.operation.parameters ?? []) as unknown[];
  const byKey = new Map<string, Parameter>();
  for (const raw of [...pathLevel, ...own]) {
    const parameter = deref<Parameter>(document, raw);
    const name = parameter.in === 'header' ? parameter.name.toLowerCase() : parameter.name;
    byKey.set(`${parameter.in}:${name}`, parameter);
  }
  return [...byKey.values()];
}

/** One security requirement: scheme name → scopes. Every scheme of one requirement applies at once. */
export type SecurityRequirement = Record<string, string[]>;

/**
 * The security requirements of an operation: its own `security`, else the document's. Any one
 * requirement suffices; none at all (`security: []`) means the operation is public.
 *
 * @example
 * import { listOperations, loadDocument, operationSecurity } from '@svc/contract';
 * const doc = loadDocument();
 * const health = listOperations(doc).find((o) => o.operationId === 'getHealth');
 * if (health) operationSecurity(doc, health); // []
 */
export function operationSecurity(document: OpenApiDocument, op: OperationInfo): SecurityRequirement[] {
  return (op.operation.security ?? document.security ?? []) as SecurityRequirement[];
}

/**
 * Whether an operation may be called without any credential: `security: []`, or a requirement with no
 * scheme in it (`{}`, "optional").
 *
 * @example
 * import { isAnonymous, listOperations, loadDocument } from '@svc/contract';
 * const doc = loadDocument();
 * listOperations(doc).filter((op) => isAnonymous(doc, op)).map((op) => op.operationId); // ['getHealth']
 */
export function isAnonymous(document: OpenApiDocument, op: OperationInfo): boolean {
  const requirements = operationSecurity(document, op);
  return requirements.length === 0 || requirements.some((r) => Object.keys(r).length === 0);
}

/**
 * The names of the security schemes an operation accepts, in the order its requirements give them.
 *
 * @example
 * import { listOperations, loadDocument, securitySchemeNames } from '@svc/contract';
 * const doc = loadDocument();
 * const me = listOperations(doc).find((o) => o.operationId === 'getMe');
 * if (me) securitySchemeNames(doc, me); // ['bearerAuth']
 */
export function securitySchemeNames(document: OpenApiDocument, op: OperationInfo): string[] {
  return [...new Set(operationSecurity(document, op).flatMap((r) => Object.keys(r)))];
}

/** An operation's request body: whether it is required, its media types and its JSON schema. */
export interface RequestBody {
  required: boolean;
  /** Media type → media type object, as written. */
  content: Record<string, JsonObject>;
  /** The `application/json` schema as written (nested `$ref`s kept); undefined when there is none. */
  schema: JsonObject | undefined;
}

/**
 * The request body of an operation, `$ref` followed; undefined when it takes none.
 *
 * @example
 * import { listOperations, loadDocument, requestBody } from '@svc/contract';
 * const doc = loadDocument();
 * const op = listOperations(doc).find((o) => o.operationId === 'createComputer');
 * if (op) requestBody(doc, op)?.required; // true
 */
export function requestBody(document: OpenApiDocument, op: OperationInfo): RequestBody | undefined {
  if (op.operation.requestBody === undefined) return undefined;
  const body = deref(document, op.operation.requestBody);
  const content = (body.content ?? {}) as Record<string, JsonObject>;
  return { required: body.required === true, content, schema: jsonSchemaOf(content) };
}

/** One documented response of an operation. */
export interface OperationResponse {
  /** The status key as written: `200`, `4XX` or `default`. */
  status: string;
  /** The response object, `$ref` followed. */
  response: JsonObject;
  /** The `application/json` schema as written (nested `$ref`s kept); undefined for a response without a body. */
  schema: JsonObject | undefined;
  /** Header name → header object, `$ref`s followed. */
  headers: Record<string, JsonObject>;
  /** A local reference to the response object (`#/components/responses/NotFound`, or its place under `paths`). */
  ref: string;
}

/**
 * Every documented response of an operation, in spec order.
 *
 * @example
 * import { listOperations, loadDocument, operationResponses } from '@svc/contract';
 * const doc = loadDocument();
 * const op = listOperations(doc).find((o) => o.operationId === 'getMe');
 * if (op) operationResponses(doc, op).map((r) => r.status); // ['200', '401', '429', '500', '503']
 */
export function operationResponses(document: OpenApiDocument, op: OperationInfo): OperationResponse[] {
  const responses = (op.operation.responses ?? {}) as JsonObject;
  return Object.entries(responses).map(([status, raw]) => {
    const { value, ref } = derefWithRef(document, raw);
    const content = value.content as Record<string, JsonObject> | undefined;
    const headers = Object.fromEntries(
      Object.entries((value.headers ?? {}) as JsonObject).map(([name, h]) => [name, deref(document, h)]),
    );
    return {
      status,
      response: value,
      schema: jsonSchemaOf(content),
      headers,
      ref: ref ?? `#/paths/${pointerPart(op.path)}/${op.method}/responses/${pointerPart(status)}`,
    };
  });
}

/**
 * The response an operation documents for a status: the exact code, else its class (`4XX`), else
 * `default`; undefined when none matches.
 *
 * @example
 * import { listOperations, loadDocument, responseFor } from '@svc/contract';
 * const doc = loadDocument();
 * const op = listOperations(doc).find((o) => o.operationId === 'getMe');
 * if (op) responseFor(doc, op, 404)?.status; // undefined: getMe documents no 404 and no default
 */
export function responseFor(
  document: OpenApiDocument,
  op: OperationInfo,
  status: number,
): OperationResponse | undefined {
  const responses = operationResponses(document, op);
  const code = String(status);
  return (
    responses.find((r) => r.status === code) ??
    responses.find((r) => r.status === `${code[0]}XX`) ??
    responses.find((r) => r.status === 'default')
  );
}

/**
 * The values of an enum schema, named (`ComputerState`), by local reference
 * (`#/components/schemas/ComputerState`) or given as a schema; throws when it is not an enum.
 *
 * @example
 * import { enumValues, loadDocument } from '@svc/contract';
 * enumValues(loadDocument(), 'Role'); // ['owner', 'admin', 'editor', 'viewer']
 */
export function enumValues(document: OpenApiDocument, schema: string | JsonObject): unknown[] {
  const ref =
    typeof schema !== 'string'
      ? undefined
      : schema.startsWith('#/')
        ? schema
        : `#/components/schemas/${schema}`;
  const resolved = ref === undefined ? deref(document, schema) : deref(document, resolveRef(document, ref));
  if (!Array.isArray(resolved.enum)) throw new Error(`${ref ?? 'the schema'} is not an enum`);
  return resolved.enum;
}

function jsonSchemaOf(content: Record<string, JsonObject> | undefined): JsonObject | undefined {
  return content?.['application/json']?.schema as JsonObject | undefined;
}

/** One reference token of a JSON pointer (RFC 6901 §3). */
function pointerPart(token: string): string {
  return token.replaceAll('~', '~0').replaceAll('/', '~1');
}
