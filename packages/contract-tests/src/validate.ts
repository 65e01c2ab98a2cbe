// The contract's checks of one response, compiled from the bundle (ajv, JSON Schema 2020-12): the
// contract suite's harness runs them on every answer of a target, and the mocks' honesty tests (Prism's
// here, the MSW kit's in @svc/react) on every answer of a mock. Nothing here re-types a schema.
import {
  BYTE_MEDIA_TYPES,
  deref,
  derefWithRef,
  loadDocument,
  type OperationInfo,
  responseFor,
} from '@svc/contract';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

// ajv-formats is CommonJS with a default export; under NodeNext its default arrives as the module object.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

const document = loadDocument();
const ID = /^[0-9a-hjkmnp-tv-z]{27}$/;
const DOC_ID = 'https://svc.invalid/openapi.json';

const ajv = new Ajv2020({ allErrors: true, strict: false, validateFormats: true });
addFormats(ajv);
ajv.addSchema(document as object, DOC_ID);

const compiled = new Map<string, ValidateFunction>();

/** One reference token of a JSON pointer (RFC 6901 §3). */
export const escapePointer = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');

/** Follows `$ref`s from a node of the bundle: the node they end at, and its JSON pointer if one was followed. */
export function resolve(node: unknown): { value: Record<string, unknown>; pointer: string | undefined } {
  const { value, ref } = derefWithRef(document, node);
  return { value, pointer: ref?.slice(1) };
}

/** The response object the spec declares for an operation and status, and a JSON pointer to it. */
export function declaredResponse(op: OperationInfo, status: number) {
  const declared = responseFor(document, op, status);
  return declared && { response: declared.response, pointer: declared.ref.slice(1) };
}

function schemaValidator(op: OperationInfo, status: number): ValidateFunction | undefined | null {
  const declared = declaredResponse(op, status);
  if (!declared) return undefined;
  const content = declared.response.content as Record<string, unknown> | undefined;
  if (!content?.['application/json']) return null; // no body, or not JSON (a stream, bytes)
  const ref = `${DOC_ID}#${declared.pointer}/content/application~1json/schema`;
  let validate = compiled.get(ref);
  if (!validate) {
    validate = ajv.compile({ $ref: ref });
    compiled.set(ref, validate);
  }
  return validate;
}

/** A validator for the schema at a JSON pointer of the bundle (e.g. one property of a request schema). */
export function validatorAt(pointer: string): ValidateFunction {
  const ref = `${DOC_ID}#${pointer}`;
  let validate = compiled.get(ref);
  if (!validate) {
    validate = ajv.compile({ $ref: ref });
    compiled.set(ref, validate);
  }
  return validate;
}

/** Checks whose outcome on the mock depends on examples agreeing with each other (see README). */
export interface CheckOptions {
  /** Request-Id header = error.request_id; Location names the first operation (202) or the new resource (201). */
  crossChecks: boolean;
  /**
   * Conventions the schema itself does not state (default true): `next_cursor` is null exactly when
   * `has_more` is false, and a 202 says `Retry-After: 1`. Data generated from the schema alone (Prism's
   * `--dynamic`) cannot know them.
   */
  beyondSchema?: boolean;
}

/**
 * Every way a response breaks the contract: an undeclared status, a body that fails the spec's schema
 * for that status (Draft 2020-12), and the envelope conventions of docs/conventions.md and design §2.
 */
export function responseViolations(
  op: OperationInfo,
  response: { status: number; headers: Headers },
  body: unknown,
  options: CheckOptions,
): string[] {
  const problems: string[] = [];
  const { status, headers } = response;
  const validate = schemaValidator(op, status);
  if (validate === undefined) return [`status ${status} is not declared`];

  const requestId = headers.get('Request-Id');
  if (!requestId || !ID.test(requestId))
    problems.push(`Request-Id header missing or not an id: ${requestId}`);

  const declaredContent = declaredResponse(op, status)?.response.content as
    | Record<string, unknown>
    | undefined;
  if (declaredContent?.['text/event-stream']) {
    // An event stream: its events are checked one by one (support/streams.ts), as they arrive.
    const type = (headers.get('Content-Type') ?? '').toLowerCase();
    if (!type.startsWith('text/event-stream'))
      problems.push(`Content-Type is ${type}, not text/event-stream`);
    return problems;
  }
  const byteType = Object.keys(declaredContent ?? {}).find((type) =>
    (BYTE_MEDIA_TYPES as readonly string[]).includes(type),
  );
  if (byteType !== undefined) {
    // Bytes (a download's 200): the body is the caller's to read and compare; here, its type and the
    // headers that describe it (Content-Length and ETag where the spec declares them, by their schemas:
    // headerViolations below checks the values).
    const type = (headers.get('Content-Type') ?? '').toLowerCase();
    if (!type.startsWith(byteType)) problems.push(`Content-Type is ${type}, not ${byteType}`);
    const declaredHeaders = (declaredResponse(op, status)?.response.headers ?? {}) as Record<string, unknown>;
    for (const name of Object.keys(declaredHeaders))
      if (/^(content-length|etag)$/i.test(name) && headers.get(name) === null)
        problems.push(`header ${name} is declared but missing`);
    return problems;
  }
  if (validate === null) {
    if (body !== undefined) problems.push(`status ${status} declares no body but one was sent`);
    return problems;
  }
  if (!(headers.get('Content-Type') ?? '').toLowerCase().startsWith('application/json')) {
    problems.push(`Content-Type is ${headers.get('Content-Type')}, not application/json`);
  }
  if (!validate(body)) {
    for (const e of validate.errors ?? [])
      problems.push(`body${e.instancePath} ${e.message} ${JSON.stringify(e.params)}`);
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    return [...problems, 'body is not an object'];
  const record = body as Record<string, unknown>;
  const keys = Object.keys(record);

  if (status >= 400) {
    if (keys.length !== 1 || keys[0] !== 'error') problems.push(`error envelope has keys ${keys.join(',')}`);
    const error = record.error as Record<string, unknown> | undefined;
    for (const field of ['code', 'message', 'details', 'request_id']) {
      if (!error || !(field in error)) problems.push(`error.${field} is missing`);
    }
    if (options.crossChecks && error?.request_id !== requestId) {
      problems.push(`error.request_id ${String(error?.request_id)} differs from Request-Id ${requestId}`);
    }
    return problems;
  }
  if (op.tag === 'health') return problems; // health is a probe, not a resource: no envelope
  if (status === 202) {
    const operations = record.operations;
    if (!Array.isArray(operations) || operations.length === 0)
      problems.push('202 without a non-empty operations[]');
    if (keys.filter((k) => k !== 'operations').length > 1) problems.push(`202 has keys ${keys.join(',')}`);
    const location = headers.get('Location') ?? '';
    if (!/^\/v1\/operations\/[0-9a-hjkmnp-tv-z]{27}$/.test(location))
      problems.push(`202 Location is ${location}`);
    if (options.beyondSchema !== false && headers.get('Retry-After') !== '1')
      problems.push(`202 Retry-After is ${headers.get('Retry-After')}`);
    const first = Array.isArray(operations) ? (operations[0] as { id?: string } | undefined) : undefined;
    if (options.crossChecks && location !== `/v1/operations/${first?.id}`) {
      problems.push(`202 Location ${location} does not name the first operation ${first?.id}`);
    }
    return problems;
  }
  if ('has_more' in record || 'next_cursor' in record) {
    const lists = keys.filter((k) => Array.isArray(record[k]));
    if (keys.length !== 3 || lists.length !== 1) problems.push(`list envelope has keys ${keys.join(',')}`);
    if (options.beyondSchema !== false && (record.next_cursor === null) !== (record.has_more === false)) {
      problems.push(`next_cursor ${String(record.next_cursor)} with has_more ${String(record.has_more)}`);
    }
    return problems;
  }
  if (keys.length !== 1) problems.push(`single-resource envelope has keys ${keys.join(',')}`);
  if (status === 201) {
    const location = headers.get('Location') ?? '';
    const resource = record[keys[0] ?? ''] as { id?: string } | undefined;
    if (!location.startsWith('/v1/')) problems.push(`201 Location is ${location}`);
    if (options.crossChecks && !location.endsWith(`/${resource?.id}`)) {
      problems.push(`201 Location ${location} does not name the new resource ${resource?.id}`);
    }
  }
  return problems;
}

const headerValidators = new WeakMap<object, ValidateFunction>();

/**
 * What breaks the response headers the spec declares for this status: a required header missing, or a
 * header whose value does not fit its schema (numbers compared as numbers).
 *
 * @example
 * const op = listOperations(loadDocument()).find((o) => o.operationId === 'getMe')!;
 * headerViolations(op, 200, new Headers()); // ['header Request-Id is required but missing', …]
 */
export function headerViolations(op: OperationInfo, status: number, headers: Headers): string[] {
  const declared = responseFor(document, op, status);
  const problems: string[] = [];
  for (const [name, header] of Object.entries(declared?.headers ?? {})) {
    const raw = headers.get(name);
    if (raw === null) {
      if (header.required === true) problems.push(`header ${name} is required but missing`);
      continue;
    }
    const schema = deref(document, header.schema);
    const numeric = schema.type === 'integer' || schema.type === 'number';
    const value = numeric && /^-?\d+(\.\d+)?$/.test(raw) ? Number(raw) : raw;
    let validate = headerValidators.get(schema);
    if (!validate) {
      validate = ajv.compile({ ...schema, $id: undefined });
      headerValidators.set(schema, validate);
    }
    if (!validate(value))
      problems.push(`header ${name}: ${JSON.stringify(raw)} ${ajv.errorsText(validate.errors)}`);
  }
  return problems;
}
