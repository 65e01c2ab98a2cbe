// The generated types of byte bodies (scripts/generate.mjs): openapi-typescript types `format: binary`
// as `string`, which no client can send a file as; the generator types a byte request body as the bytes
// `fetch` sends (ByteBodyInput) and a byte 200 as the stream it answers (ByteBodyOutput). `pnpm
// typecheck` fails on the type assertions, vitest on the generated text.
import { readFileSync } from 'node:fs';
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { ByteBodyInput, ByteBodyOutput, operations } from '../src/index.js';
import { byteOperationIds, byteRequestBody, byteResponse, loadDocument } from '../src/index.js';

type RequestOf<K extends keyof operations> = operations[K] extends {
  requestBody: { content: infer C };
}
  ? C
  : never;
type OkOf<K extends keyof operations> = operations[K]['responses'] extends {
  200: { content: infer C };
}
  ? C
  : never;

describe('the generated types of byte bodies', () => {
  it('types an upload body as bytes fetch sends, and a download as the stream it answers', () => {
    expectTypeOf<RequestOf<'uploadComputerFile'>>().toEqualTypeOf<{
      'application/octet-stream': ByteBodyInput;
    }>();
    expectTypeOf<RequestOf<'uploadComputerArchive'>>().toEqualTypeOf<{
      'application/x-tar': ByteBodyInput;
    }>();
    expectTypeOf<OkOf<'downloadComputerFile'>>().toEqualTypeOf<{
      'application/octet-stream': ByteBodyOutput;
    }>();
    expectTypeOf<OkOf<'downloadComputerArchive'>>().toEqualTypeOf<{ 'application/x-tar': ByteBodyOutput }>();
    expectTypeOf<string>().not.toExtend<ByteBodyInput>();
    expectTypeOf<Uint8Array>().toExtend<ByteBodyInput>();
  });

  it('types every byte body of the spec so, none as a string', () => {
    const schema = readFileSync(new URL('../src/generated/schema.ts', import.meta.url), 'utf8');
    const doc = loadDocument();
    const typed = new Set<string>();
    for (const id of byteOperationIds(doc)) {
      // The operation's block in the generated `operations` interface, up to the next operation.
      const block = schema.slice(schema.indexOf(`    ${id}: {`)).split(/\n {4}[a-zA-Z]+: \{\n/)[0] ?? '';
      for (const body of [byteRequestBody(doc, id), byteResponse(doc, id)]) {
        if (body === undefined) continue;
        const line = block.split('\n').find((l) => l.includes(`"${body.mediaType}":`)) ?? '';
        expect(line, `${id} ${body.mediaType}`).not.toMatch(/: string;$/);
        typed.add(line.trim());
      }
    }
    expect([...typed].sort()).toEqual([
      '"application/octet-stream": Blob | Uint8Array | ArrayBuffer | ReadableStream<Uint8Array>;',
      '"application/octet-stream": ReadableStream<Uint8Array>;',
      '"application/x-tar": Blob | Uint8Array | ArrayBuffer | ReadableStream<Uint8Array>;',
      '"application/x-tar": ReadableStream<Uint8Array>;',
      '"image/png": ReadableStream<Uint8Array>;',
    ]);
  });
});
