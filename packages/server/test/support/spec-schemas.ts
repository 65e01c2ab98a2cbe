import { loadDocument } from '@svc/contract';
import type { ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

// ajv-formats is CommonJS: its plugin is the module or its `default`, depending on the loader.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ??
  addFormatsModule) as unknown as (ajv: Ajv2020) => void;

const BUNDLE = 'https://svc.test/openapi.json';
let ajv: Ajv2020 | undefined;
const compiled = new Map<string, ValidateFunction>();

/**
 * The errors of `value` against the bundled spec's `components.schemas[name]` (Ajv 2020, formats
 * checked), `[]` when it is valid: how tests check what the server sends outside a JSON response
 * (an SSE event's `data`).
 *
 * @example
 * expect(schemaErrors('ComputerEvent', event.data)).toEqual([]);
 */
export function schemaErrors(name: string, value: unknown): string[] {
  if (!ajv) {
    ajv = new Ajv2020({ strict: false, allErrors: true, allowUnionTypes: true, validateFormats: true });
    addFormats(ajv);
    ajv.addSchema({ $id: BUNDLE, components: loadDocument().components } as never);
  }
  let validate = compiled.get(name);
  if (!validate) {
    validate = ajv.compile({ $ref: `${BUNDLE}#/components/schemas/${name}` });
    compiled.set(name, validate);
  }
  return validate(value)
    ? []
    : (validate.errors ?? []).map((error) => `${error.instancePath || '/'} ${error.message ?? ''}`);
}
