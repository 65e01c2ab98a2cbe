import type { OpenApiDocument, OperationInfo } from '@svc/contract';
import {
  requestBody as declaredBody,
  isAnonymous,
  listOperations,
  operationParameters,
  operationResponses,
} from '@svc/contract';
import type { Format, ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { Resolve, Schema } from './schema-arbitrary.js';
import { resolver } from './schema-arbitrary.js';

/** ajv-formats' plugin: a function of the Ajv instance, and `get` for one format's definition. */
type FormatsPlugin = ((ajv: Ajv2020) => void) & { get(name: 'date-time', mode: 'full'): Format };
const formatsPlugin = ((addFormatsModule as unknown as { default?: unknown }).default ??
  addFormatsModule) as unknown as FormatsPlugin;
const addFormats = formatsPlugin;

/**
 * The oracle's `date-time`: RFC 3339 as ajv-formats reads it, and an instant that exists (a leap
 * second `23:59:60` is RFC 3339 but no instant a service can store), so such input is known invalid.
 */
function instantDateTime(): Format {
  const rfc3339 = formatsPlugin.get('date-time', 'full') as { validate: (value: string) => boolean };
  return { type: 'string', validate: (v: string) => rfc3339.validate(v) && !Number.isNaN(Date.parse(v)) };
}

/** A declared parameter of one operation, with its compiled schema. */
export interface Param {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  schema: Schema;
  /** Whether the raw text (as it arrives in a URL or header) is valid, coerced the way the spec's types read. */
  accepts(raw: string): boolean;
}

/** What the fuzzer needs to know about one operation, read from the bundle. */
export interface OperationSpec {
  info: OperationInfo;
  /** The spec lets anyone call it (`security: []`). */
  anonymous: boolean;
  params: Param[];
  body: { required: boolean; schema: Schema; validate: ValidateFunction } | undefined;
  /** Validates a response: [] when it conforms to the documented status, body and required headers. */
  checkResponse(status: number, body: unknown, headers: Headers): string[];
}

/**
 * An oracle independent of the server's own validator: Ajv (draft 2020-12) compiled from the
 * bundled document, used to CLASSIFY generated requests (valid or not) and to check responses.
 *
 * @example
 * const oracle = specOracle(loadDocument());
 * oracle.operation('listComputers').checkResponse(200, body, headers);
 */
export function specOracle(document: OpenApiDocument): {
  resolve: Resolve;
  operation(operationId: string): OperationSpec;
  operations: OperationSpec[];
  validateError(body: unknown): string[];
} {
  const resolve = resolver(document);
  const ajv = new Ajv2020({ strict: false, allErrors: false, allowUnionTypes: true, validateFormats: true });
  addFormats(ajv);
  ajv.addFormat('date-time', instantDateTime());
  const BUNDLE = 'https://svc.test/openapi.json';
  ajv.addSchema({ $id: BUNDLE, components: document.components } as unknown as Schema);
  const rebase = (schema: unknown): Schema =>
    JSON.parse(JSON.stringify(schema).replace(/"\$ref":"#\//g, `"$ref":"${BUNDLE}#/`)) as Schema;
  const cache = new Map<string, ValidateFunction>();
  const compile = (schema: unknown): ValidateFunction => {
    const key = JSON.stringify(schema);
    let fn = cache.get(key);
    if (!fn) {
      fn = ajv.compile(rebase(schema));
      cache.set(key, fn);
    }
    return fn;
  };
  const errors = (fn: ValidateFunction) =>
    (fn.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''}`.trim());

  const build = (info: OperationInfo): OperationSpec => {
    const params: Param[] = operationParameters(document, info).map((p) => {
      const schema = resolve(p.schema);
      const validate = compile(p.schema);
      const type = schema.type;
      return {
        name: p.name,
        in: p.in as Param['in'],
        required: p.required === true,
        schema,
        accepts(text: string) {
          let value: unknown = text;
          if (type === 'integer') value = /^-?(0|[1-9][0-9]*)$/.test(text) ? Number(text) : text;
          else if (type === 'boolean') value = text === 'true' ? true : text === 'false' ? false : text;
          return validate(value) as boolean;
        },
      };
    });
    const requestBody = declaredBody(document, info);
    const responses = operationResponses(document, info);
    return {
      info,
      anonymous: isAnonymous(document, info),
      params,
      body: requestBody?.schema
        ? {
            required: requestBody.required,
            schema: resolve(requestBody.schema),
            validate: compile(requestBody.schema),
          }
        : undefined,
      checkResponse(status, body, headers) {
        // The exact status only: the server documents every status it sends (no `default`).
        const declared = responses.find((r) => r.status === String(status));
        if (!declared) return [`status ${status} is not documented for ${info.operationId}`];
        const problems: string[] = [];
        if (declared.schema) {
          const validate = compile(declared.schema);
          if (!validate(body)) problems.push(...errors(validate).map((e) => `body ${e}`));
        } else if (body !== undefined) {
          // Bytes (a file, an archive, a picture): no JSON schema, but the media types it may be.
          const types = Object.keys((declared.response.content ?? {}) as Record<string, unknown>);
          const type = headers.get('content-type')?.split(';')[0]?.trim();
          if (types.length === 0) problems.push(`status ${status} documents no body`);
          else if (type === undefined || !types.includes(type))
            problems.push(`content-type ${type} is none of ${types.join(', ')}`);
        }
        for (const [name, header] of Object.entries(declared.headers)) {
          if (header.required && !headers.has(name)) problems.push(`header ${name} is required`);
        }
        return problems;
      },
    };
  };

  const operations = new Map<string, OperationSpec>();
  for (const info of listOperations(document)) operations.set(info.operationId, build(info));
  const errorSchema = compile({ $ref: '#/components/schemas/Error' });
  return {
    resolve,
    operations: [...operations.values()],
    operation(operationId) {
      const found = operations.get(operationId);
      if (!found) throw new Error(`unknown operation ${operationId}`);
      return found;
    },
    validateError(body) {
      return errorSchema(body) ? [] : errors(errorSchema);
    },
  };
}
