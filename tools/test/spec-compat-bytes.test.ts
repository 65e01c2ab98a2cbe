// The compatibility policy of byte bodies, kind by kind: each row changes one thing in a small bundled
// contract with an upload (`PUT`, a byte request body with `x-svc-max-bytes`) and a download (`GET`, a
// byte 200 with `Content-Length` and `ETag`), and says how tools/spec-compat.mjs must classify it.
import { describe, expect, it } from 'vitest';
import { type Change, compareContracts, POLICY } from '../spec-compat.mjs';

// biome-ignore lint/suspicious/noExplicitAny: the fixture is a plain JSON document edited freely
type Doc = any;

const OCTETS = 'application/octet-stream';
const TAR = 'application/x-tar';
const FILE = '/things/{thing}/file';
const UPLOAD = `PUT ${FILE}`;
const DOWNLOAD = `GET ${FILE}`;
const binary = (extra: Record<string, unknown> = {}) => ({ type: 'string', format: 'binary', ...extra });
const header = (type: string) => ({ schema: { type } });

/** A bundled contract with one upload and one download of the same file. */
function contract(): Doc {
  return {
    openapi: '3.1.0',
    info: { title: 'Bytes', version: '1.0.0' },
    paths: {
      [FILE]: {
        get: {
          operationId: 'downloadThingFile',
          responses: {
            '200': {
              description: 'The bytes.',
              headers: { 'Content-Length': header('integer'), ETag: header('string') },
              content: { [OCTETS]: { schema: binary() } },
            },
          },
        },
        put: {
          operationId: 'uploadThingFile',
          requestBody: {
            required: true,
            content: { [OCTETS]: { schema: binary({ 'x-svc-max-bytes': 1024 }) } },
          },
          responses: { '204': { description: 'Written.' } },
        },
      },
    },
  };
}

const upload = (d: Doc) => d.paths[FILE].put.requestBody.content;
const ok = (d: Doc) => d.paths[FILE].get.responses['200'];

interface Row {
  change: (d: Doc) => void;
  kinds: string[];
  breaking: boolean;
  operation: string;
}

const rows: Record<string, Row> = {
  'a lower x-svc-max-bytes': {
    change: (d) => {
      upload(d)[OCTETS].schema['x-svc-max-bytes'] = 512;
    },
    kinds: ['request-byte-limit-lowered'],
    breaking: true,
    operation: UPLOAD,
  },
  'a higher x-svc-max-bytes': {
    change: (d) => {
      upload(d)[OCTETS].schema['x-svc-max-bytes'] = 4096;
    },
    kinds: ['request-byte-limit-raised'],
    breaking: false,
    operation: UPLOAD,
  },
  "an upload's byte media type changed": {
    change: (d) => {
      upload(d)[TAR] = upload(d)[OCTETS];
      delete upload(d)[OCTETS];
    },
    kinds: ['byte-body-media-type-changed', 'request-media-type-removed', 'request-media-type-added'],
    breaking: true,
    operation: UPLOAD,
  },
  "a download's byte media type changed": {
    change: (d) => {
      ok(d).content[TAR] = ok(d).content[OCTETS];
      delete ok(d).content[OCTETS];
    },
    kinds: ['byte-body-media-type-changed', 'response-media-type-removed', 'response-media-type-added'],
    breaking: true,
    operation: DOWNLOAD,
  },
  'an upload taking JSON in place of bytes': {
    change: (d) => {
      upload(d)['application/json'] = { schema: { type: 'object' } };
      delete upload(d)[OCTETS];
    },
    kinds: ['byte-body-media-type-changed', 'request-media-type-removed', 'request-media-type-added'],
    breaking: true,
    operation: UPLOAD,
  },
  'a download answering JSON in place of bytes': {
    change: (d) => {
      ok(d).content['application/json'] = { schema: { type: 'object' } };
      delete ok(d).content[OCTETS];
    },
    kinds: ['byte-body-media-type-changed', 'response-media-type-removed', 'response-media-type-added'],
    breaking: true,
    operation: DOWNLOAD,
  },
  'a download answering bytes in place of JSON (and back)': {
    change: (d) => {
      d.paths[FILE].get.responses['200'] = {
        description: 'JSON.',
        headers: ok(d).headers,
        content: { 'application/json': { schema: { type: 'object' } } },
      };
    },
    kinds: ['byte-body-media-type-changed', 'response-media-type-removed', 'response-media-type-added'],
    breaking: true,
    operation: DOWNLOAD,
  },
  'a download losing Content-Length': {
    change: (d) => {
      delete ok(d).headers['Content-Length'];
    },
    kinds: ['response-header-removed'],
    breaking: true,
    operation: DOWNLOAD,
  },
  'a download losing ETag': {
    change: (d) => {
      delete ok(d).headers.ETag;
    },
    kinds: ['response-header-removed'],
    breaking: true,
    operation: DOWNLOAD,
  },
  'a byte media type added beside the one there': {
    change: (d) => {
      upload(d)[TAR] = { schema: binary({ 'x-svc-max-bytes': 1024 }) };
    },
    kinds: ['request-media-type-added'],
    breaking: false,
    operation: UPLOAD,
  },
};

describe('the compatibility policy of byte bodies', () => {
  it.each(Object.entries(rows))('%s', (_name, row) => {
    const current = contract();
    row.change(current);
    const changes: Change[] = compareContracts(contract(), current);
    expect([...new Set(changes.map((c) => c.kind))].sort(), JSON.stringify(changes, null, 2)).toEqual(
      [...row.kinds].sort(),
    );
    expect(changes.every((c) => c.operation === row.operation)).toBe(true);
    expect(changes.some((c) => c.class === 'breaking')).toBe(row.breaking);
    for (const c of changes) expect(c.class).toBe(POLICY[c.kind]);
  });

  it('points a changed limit at the extension in the current bundle', () => {
    const current = contract();
    upload(current)[OCTETS].schema['x-svc-max-bytes'] = 1;
    expect(compareContracts(contract(), current)).toEqual([
      expect.objectContaining({
        kind: 'request-byte-limit-lowered',
        message: 'request body (application/octet-stream): x-svc-max-bytes 1024 → 1',
        pointer: `/paths/${FILE.replaceAll('/', '~1')}/put/requestBody/content/application~1octet-stream/schema/x-svc-max-bytes`,
      }),
    ]);
  });

  it('finds nothing between a contract and itself', () => {
    expect(compareContracts(contract(), contract())).toEqual([]);
  });
});
