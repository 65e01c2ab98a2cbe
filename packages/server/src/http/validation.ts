import type { Readable } from 'node:stream';
import type {
  ByteBody,
  OpenApiDocument,
  OperationId,
  OperationInfo,
  OperationKind,
  OperationPolicy,
  Parameter,
} from '@svc/contract';
import {
  deref,
  listOperations,
  operationKind,
  operationParameters,
  operationPolicy,
  requestBody,
  responseFor,
} from '@svc/contract';
import type { Format, ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { MAX_BODY_BYTES, parseJson, readBody } from './body.js';
import type { IncomingBytes } from './byte-body.js';
import { checkByteRequest } from './byte-request.js';
import type { FieldViolation } from './violations.js';
import { fieldPath, toViolations } from './violations.js';

export type { FieldViolation } from './violations.js';

/** Why a request was refused before any handler ran; each maps to one error code of design §9. */
export type RequestFailureKind =
  | 'invalid_argument'
  | 'invalid_request'
  | 'idempotency_key_required'
  | 'unsupported_media_type'
  | 'payload_too_large';

/** Parameters and body of a request that passed validation, coerced to their schema types. */
export interface ValidRequest {
  ok: true;
  /** Path parameters, percent-decoded. */
  params: Record<string, unknown>;
  /** Query parameters the spec declares, coerced (`limit` is a number) and with schema defaults filled in. */
  query: Record<string, unknown>;
  /** Header parameters the spec declares, under their spec names (e.g. `Idempotency-Key`). */
  headers: Record<string, string>;
  /**
   * The parsed JSON body, or `undefined` when the operation takes none or an optional one was left out;
   * for an operation whose body is bytes (`operationKind`: `bytes-in`), the {@link IncomingBytes} still
   * to read.
   */
  body: unknown | IncomingBytes;
}

/** A request refused by validation; `violations` is empty for the kinds that carry none. */
export interface InvalidRequest {
  ok: false;
  kind: RequestFailureKind;
  violations: FieldViolation[];
  /** The answer's message when the generic one of the kind does not fit (a byte body's limit). */
  message?: string;
  /** The answer's `details` when they are not the violations (`limit_bytes` of a byte body). */
  details?: Record<string, unknown>;
  /** Headers of the answer (`Connection: close` when the body was left unread). */
  headers?: Record<string, string>;
}

export type RequestValidation = ValidRequest | InvalidRequest;

/** The parameter parts of a request, read off the `Request` only when the operation has such parameters. */
interface RequestParts {
  pathParams: Record<string, string>;
  query: URLSearchParams;
  headers: Headers;
}

/** What the spec says about an operation's inputs, for callers that branch on it (e.g. idempotency). */
export interface OperationShape {
  operationId: OperationId;
  method: string;
  path: string;
  requestBody: 'none' | 'optional' | 'required';
  idempotencyKey: 'none' | 'optional' | 'required';
  /** What it declares beyond its HTTP shape (`x-svc`): its permission, its transaction. */
  policy: OperationPolicy;
}

/** Request and response validators for every operation of the document. */
export interface Validator {
  /**
   * Validates parameters, then content type, size, JSON syntax and schema of the body. `nodeBody`:
   * the Node request under `request`, whose body a byte upload then reads directly (see `nodeRequestBody`).
   */
  validateRequest(
    operationId: OperationId,
    request: Request,
    pathParams: Record<string, string>,
    nodeBody?: Readable,
  ): Promise<RequestValidation>;
  /**
   * Violations of the spec by a response (`[]` when it conforms): an undocumented status, a body that
   * breaks the status's schema, a body where none is documented, and (when `headers` is given) a
   * missing required header or a header value that breaks its schema. For tests and dev mode.
   */
  validateResponse(
    operationId: OperationId,
    status: number,
    body: unknown,
    headers?: Headers,
  ): FieldViolation[];
  shape(operationId: OperationId): OperationShape;
}

type Json = Record<string, unknown>;
type Coerce = 'integer' | 'number' | 'boolean' | 'string' | 'array' | 'other';

interface ParamSpec {
  name: string;
  required: boolean;
  coerce: Coerce;
  itemCoerce: Coerce;
  default: unknown;
}

interface CompiledOperation {
  shape: OperationShape;
  path: { specs: ParamSpec[]; validate: ValidateFunction } | undefined;
  query: { specs: ParamSpec[]; validate: ValidateFunction } | undefined;
  header: { specs: ParamSpec[]; validate: ValidateFunction } | undefined;
  body: ValidateFunction | undefined;
  /** The byte body the operation takes (a file, an archive), instead of JSON. */
  bytes: ByteBody | undefined;
  info: OperationInfo;
}

const SCHEMAS_ID = 'urn:svc:schemas';
const NO_QUERY = new URLSearchParams();
const NO_HEADERS = new Headers();
/** ajv-formats' plugin: a function of the Ajv instance, and `get` for one format's definition. */
type FormatsPlugin = ((ajv: Ajv2020) => void) & { get(name: 'date-time', mode: 'full'): Format };
const formatsPlugin = ((addFormatsModule as unknown as { default?: unknown }).default ??
  addFormatsModule) as unknown as FormatsPlugin;
const addFormats = formatsPlugin;

/**
 * `date-time` as ajv-formats checks it (RFC 3339 grammar, real calendar days), and also a real
 * instant: RFC 3339 admits a leap second (`23:59:60`), which JavaScript's `Date` (and so every handler
 * and the database driver) cannot represent. Such a value is a field violation (400), never a 500.
 */
function strictDateTime(): Format {
  const base = formatsPlugin.get('date-time', 'full') as { validate: (value: string) => boolean };
  return {
    type: 'string',
    validate: (value: string) => base.validate(value) && Number.isFinite(Date.parse(value)),
  };
}

/**
 * Compiles JSON Schema validators (Ajv, draft 2020-12, strict mode, formats) for the request side of
 * every operation at start-up, and for responses lazily on first use (they serve tests and dev mode).
 * The component schemas are registered once under their own `$id`; the document's `#/components/schemas/X`
 * references are pointed there, so nothing is copied by hand.
 *
 * Decisions: query parameters the spec does not declare are ignored; a declared non-array query
 * parameter given twice is a violation; a body sent to an operation without `requestBody` is ignored
 * (not read); a missing required `Idempotency-Key` is `idempotency_key_required`, an invalid one
 * `invalid_argument`. Check order: idempotency key, content type (415), size (413), JSON syntax
 * (`invalid_request`), then every parameter and body violation together (`invalid_argument`).
 *
 * @example
 * import { loadDocument } from '@svc/contract';
 * const validator = compileValidator(loadDocument());
 * const request = new Request('https://api.example/v1/workspaces?limit=10');
 * const checked = await validator.validateRequest('listWorkspaces', request, {});
 * // { ok: true, query: { limit: 10 }, ... }
 */
export function compileValidator(
  document: OpenApiDocument,
  maxBodyBytes = MAX_BODY_BYTES,
  options: { maxByteBodyBytes?: number } = {},
): Validator {
  const maxByteBodyBytes = options.maxByteBodyBytes ?? Number.MAX_SAFE_INTEGER;
  const ajv = new Ajv2020({ strict: true, allErrors: true, allowUnionTypes: true });
  addFormats(ajv);
  ajv.addFormat('date-time', strictDateTime());
  // The spec's annotation for enums that may gain values (README, "Open enums"); nothing to validate.
  ajv.addKeyword({ keyword: 'x-extensible-enum', schemaType: 'boolean' });
  // What the dynamic mock generates for a value (json-schema-faker's faker keyword, `internet.url` on
  // WebhookUrl); nothing to validate.
  ajv.addKeyword({ keyword: 'x-faker', schemaType: 'string' });
  const schemas = (document.components.schemas ?? {}) as Json;
  ajv.addSchema({ $id: SCHEMAS_ID, $defs: pointRefs(schemas) });

  const operations = new Map<string, CompiledOperation>();
  for (const op of listOperations(document)) {
    const parameters = operationParameters(document, op);
    const body = requestBody(document, op);
    const bytes = byteBodyOf(operationKind(document, op));
    const idempotency = parameters.find(
      (p) => p.in === 'header' && p.name.toLowerCase() === 'idempotency-key',
    );
    operations.set(op.operationId, {
      shape: {
        operationId: op.operationId as OperationId,
        method: op.method.toUpperCase(),
        path: op.path,
        requestBody: body ? (body.required ? 'required' : 'optional') : 'none',
        idempotencyKey: idempotency ? (idempotency.required ? 'required' : 'optional') : 'none',
        policy: operationPolicy(document, op),
      },
      path: compileParams(ajv, document, parameters, 'path'),
      query: compileParams(ajv, document, parameters, 'query'),
      header: compileParams(ajv, document, parameters, 'header'),
      body: body?.schema && !bytes ? ajv.compile(pointRefs(body.schema)) : undefined,
      bytes,
      info: op,
    });
  }

  const compiledResponses = new WeakMap<object, ValidateFunction>();
  const compileOnce = (schema: Json): ValidateFunction => {
    const validate = compiledResponses.get(schema) ?? ajv.compile(pointRefs(schema));
    compiledResponses.set(schema, validate);
    return validate;
  };
  const get = (operationId: string): CompiledOperation => {
    const compiled = operations.get(operationId);
    if (!compiled) throw new Error(`unknown operationId ${operationId}`);
    return compiled;
  };

  const validateParams = (compiled: CompiledOperation, parts: RequestParts) => {
    const violations: FieldViolation[] = [];
    const params = checkParams(compiled.path, 'path', (n) => single(parts.pathParams[n]), violations);
    const query = checkParams(compiled.query, 'query', (n) => parts.query.getAll(n), violations);
    const headers = checkParams(
      compiled.header,
      'header',
      (n) => single(parts.headers.get(n)),
      violations,
    ) as Record<string, string>;
    return { params, query, headers, violations };
  };
  const missingIdempotencyKey = (compiled: CompiledOperation, headers: Headers): boolean =>
    compiled.shape.idempotencyKey === 'required' && !headers.has('idempotency-key');

  const finish = (
    compiled: CompiledOperation,
    base: ReturnType<typeof validateParams>,
    bytes: Uint8Array | undefined,
  ): RequestValidation => {
    let body: unknown;
    const violations = base.violations;
    if (bytes && bytes.byteLength > 0) {
      const parsed = parseJson(bytes);
      if (!parsed.ok)
        return {
          ok: false,
          kind: 'invalid_request',
          violations: [{ field: 'body', description: parsed.description }],
        };
      body = parsed.value;
      if (compiled.body && !compiled.body(body))
        // The spec's FieldViolation names body fields without a prefix (`labels.team`).
        violations.push(...toViolations(compiled.body.errors, body, ''));
    } else if (compiled.shape.requestBody === 'required') {
      violations.push({ field: 'body', description: 'a JSON body is required' });
    }
    if (violations.length > 0)
      return { ok: false, kind: 'invalid_argument', violations: violations.slice(0, 100) };
    return { ok: true, params: base.params, query: base.query, headers: base.headers, body };
  };

  return {
    async validateRequest(operationId, request, pathParams, nodeBody) {
      const compiled = get(operationId);
      if (missingIdempotencyKey(compiled, request.headers)) return idempotencyKeyRequired();
      // Touch `url` and `headers` only when the operation has such parameters: on the Node adapter's
      // lazy Request each costs an allocation, and GET /me (the hot path) has neither.
      const base = validateParams(compiled, {
        pathParams,
        query: compiled.query ? new URL(request.url).searchParams : NO_QUERY,
        headers: compiled.header ? request.headers : NO_HEADERS,
      });
      if (compiled.shape.requestBody === 'none') return finish(compiled, base, undefined);
      if (compiled.bytes) {
        // A file or an archive: never read here, never buffered; the handler streams it.
        const checked = checkByteRequest(request, compiled.bytes, maxByteBodyBytes, nodeBody);
        if ('ok' in checked) return checked;
        if (base.violations.length > 0) {
          void checked.stream.cancel().catch(() => {});
          return {
            ok: false,
            kind: 'invalid_argument',
            violations: base.violations.slice(0, 100),
            headers: { connection: 'close' },
          };
        }
        return { ok: true, params: base.params, query: base.query, headers: base.headers, body: checked };
      }
      const contentType = request.headers.get('content-type');
      if (contentType !== null && !isJson(contentType)) return unsupportedMediaType(contentType);
      const read = await readBody(request, maxBodyBytes);
      if (!read.ok) return { ok: false, kind: 'payload_too_large', violations: [] };
      if (contentType === null && read.bytes.byteLength > 0) return unsupportedMediaType(null);
      return finish(compiled, base, read.bytes);
    },
    validateResponse(operationId, status, body, headers) {
      const declared = responseFor(document, get(operationId).info, status);
      if (!declared)
        return [{ field: 'status', description: `${status} is not a documented response of ${operationId}` }];
      const violations: FieldViolation[] = [];
      if (declared.schema) {
        const validate = compileOnce(declared.schema);
        if (!validate(body)) violations.push(...toViolations(validate.errors, body, 'body'));
      } else if (body !== undefined && body !== null && body !== '') {
        violations.push({ field: 'body', description: `${status} has no documented body` });
      }
      if (headers) {
        for (const [name, header] of Object.entries(declared.headers)) {
          const value = headers.get(name);
          if (value === null) {
            if (header.required) violations.push({ field: `header.${name}`, description: 'is required' });
            continue;
          }
          const schema = header.schema as Json | undefined;
          if (!schema) continue;
          const validate = compileOnce(schema);
          const coerced = coerceScalar(value, coercionOf(document, schema));
          if (!validate(coerced))
            violations.push(...toViolations(validate.errors, coerced, `header.${name}`));
        }
      }
      return violations;
    },
    shape(operationId) {
      return get(operationId).shape;
    },
  };
}

function idempotencyKeyRequired(): InvalidRequest {
  return {
    ok: false,
    kind: 'idempotency_key_required',
    violations: [
      {
        field: 'header.Idempotency-Key',
        description: 'this request creates a resource and needs an Idempotency-Key',
      },
    ],
  };
}

function unsupportedMediaType(contentType: string | null): InvalidRequest {
  return {
    ok: false,
    kind: 'unsupported_media_type',
    violations: [
      {
        field: 'header.Content-Type',
        description: `must be application/json, not ${contentType ?? 'absent'}`,
      },
    ],
  };
}

/** `application/json`, optionally with `charset=utf-8` (any case, any spacing); nothing else. */
export function isJson(contentType: string): boolean {
  const [type, ...params] = contentType.split(';');
  if (type?.trim().toLowerCase() !== 'application/json') return false;
  return params.every((param) => {
    const [key, value] = param.split('=');
    if (key?.trim().toLowerCase() !== 'charset') return param.trim() === '';
    return value?.trim().replace(/^"|"$/g, '').toLowerCase() === 'utf-8';
  });
}

function single(value: string | null | undefined): string[] {
  return value === null || value === undefined ? [] : [value];
}

function checkParams(
  compiled: CompiledOperation['query'],
  location: 'path' | 'query' | 'header',
  read: (name: string) => string[],
  violations: FieldViolation[],
): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  if (!compiled) return values;
  let repeated = false;
  for (const spec of compiled.specs) {
    const raw = read(spec.name);
    if (raw.length === 0) {
      if (spec.default !== undefined) values[spec.name] = spec.default;
      continue;
    }
    if (spec.coerce === 'array') {
      values[spec.name] = raw.map((item) => coerceScalar(item, spec.itemCoerce));
    } else {
      if (raw.length > 1) {
        violations.push({
          field: fieldPath(location, [spec.name]),
          description: 'must be given at most once',
        });
        repeated = true;
      }
      values[spec.name] = coerceScalar(raw[0] as string, spec.coerce);
    }
  }
  if (!compiled.validate(values))
    violations.push(...toViolations(compiled.validate.errors, values, location));
  return repeated ? {} : values;
}

function coerceScalar(value: string, coerce: Coerce): unknown {
  switch (coerce) {
    case 'integer':
      return /^-?(0|[1-9][0-9]*)$/.test(value) ? Number(value) : value;
    case 'number':
      return value.trim() !== '' && Number.isFinite(Number(value)) ? Number(value) : value;
    case 'boolean':
      return value === 'true' ? true : value === 'false' ? false : value;
    default:
      return value;
  }
}

/**
 * What an operation's kind (`operationKind`) makes of its request, the one place validation tells the
 * kinds apart: a body of bytes, checked by its media type and size and handed on unread, for bytes in;
 * JSON (or nothing) for every other kind.
 */
function byteBodyOf(kind: OperationKind): ByteBody | undefined {
  switch (kind.kind) {
    case 'bytes-in':
      return kind.body;
    case 'json':
    case 'long-running':
    case 'event-stream':
    case 'bytes-out':
      return undefined;
    default:
      // A kind added to the contract stops the build here until it says what its request is.
      return kind satisfies never;
  }
}

function compileParams(ajv: Ajv2020, document: OpenApiDocument, parameters: Parameter[], location: string) {
  const here = parameters.filter((p) => p.in === location);
  if (here.length === 0) return undefined;
  const properties: Json = {};
  const specs: ParamSpec[] = [];
  for (const p of here) {
    const name = p.name;
    const schema = p.schema ?? {};
    properties[name] = pointRefs(schema);
    const coerce = coercionOf(document, schema);
    const resolved = deref(document, schema);
    const items = coerce === 'array' ? ((resolved.items ?? {}) as Json) : {};
    specs.push({
      name,
      required: p.required === true,
      coerce,
      itemCoerce: coercionOf(document, items),
      default: resolved.default,
    });
  }
  const required = specs.filter((s) => s.required && s.default === undefined).map((s) => s.name);
  const validate = ajv.compile({ type: 'object', properties, required });
  return { specs, validate };
}

function coercionOf(document: OpenApiDocument, schema: Json): Coerce {
  const type = deref(document, schema).type;
  return type === 'integer' ||
    type === 'number' ||
    type === 'boolean' ||
    type === 'string' ||
    type === 'array'
    ? type
    : 'other';
}

/** A deep copy whose `#/components/schemas/X` references point at the registered `$defs`. */
function pointRefs(schema: unknown): Json {
  const walk = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(walk);
    if (value === null || typeof value !== 'object') return value;
    const out: Json = {};
    for (const [key, inner] of Object.entries(value)) {
      if (key === '$ref' && typeof inner === 'string') {
        if (!inner.startsWith('#/components/schemas/'))
          throw new Error(`unsupported $ref ${inner} in a schema`);
        out.$ref = `${SCHEMAS_ID}#/$defs/${inner.slice('#/components/schemas/'.length)}`;
      } else {
        out[key] = walk(inner);
      }
    }
    return out;
  };
  return walk(schema) as Json;
}
