import { Readable } from 'node:stream';
import { expect, test } from 'vitest';
import { auditedDownload } from '../src/handlers/file-transfer.js';
import { hasNodeStream, nodeBackedStream, takeNodeStream } from '../src/node-bytes.js';

const pieces = () => [Buffer.from('ab'), Buffer.from('cde'), Buffer.from('f')];

test('nothing is opened before the first read; a web reader gets the Node chunks as they are', async () => {
  let opened = 0;
  const stream = nodeBackedStream(() => {
    opened++;
    return Readable.from(pieces());
  });
  await new Promise((resolve) => setTimeout(resolve, 10));
  expect(opened).toBe(0);
  const got: string[] = [];
  for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>)
    got.push(Buffer.from(chunk).toString());
  expect(got).toEqual(['ab', 'cde', 'f']);
  expect(opened).toBe(1);
  expect(hasNodeStream(stream)).toBe(false);
});

test('a Node consumer takes the Node stream once, while the web stream is unread', async () => {
  const node = Readable.from(pieces());
  const stream = nodeBackedStream(() => node);
  expect(hasNodeStream(stream)).toBe(true);
  expect(takeNodeStream(stream)).toBe(node);
  expect(takeNodeStream(stream)).toBeUndefined();
  expect(takeNodeStream(new Response('x').body as ReadableStream<Uint8Array>)).toBeUndefined();
});

test('cancelled unread, the Node stream is opened and destroyed (what it holds is released)', async () => {
  const node = new Readable({ read() {} });
  const stream = nodeBackedStream(() => node);
  await stream.cancel();
  expect(node.destroyed).toBe(true);
  expect(takeNodeStream(stream)).toBeUndefined();
});

test('a Node stream that fails errors the web stream', async () => {
  const stream = nodeBackedStream(
    () =>
      new Readable({
        read() {
          this.destroy(new Error('the Engine went away'));
        },
      }),
  );
  await expect(new Response(stream).arrayBuffer()).rejects.toThrow('the Engine went away');
});

test('an audited download of a node-backed stream stays node-backed, and counts what the Node consumer reads', async () => {
  const audits: [number, boolean][] = [];
  const audited = auditedDownload(
    nodeBackedStream(() => Readable.from(pieces())),
    (bytes, completed) => audits.push([bytes, completed]),
  );
  const node = takeNodeStream(audited) as Readable;
  for await (const _ of node) {
  }
  expect(audits).toEqual([[6, true]]);

  const cut: [number, boolean][] = [];
  const endless = new Readable({
    read() {
      setImmediate(() => this.push(Buffer.from('xy')));
    },
  });
  const broken = takeNodeStream(
    auditedDownload(
      nodeBackedStream(() => endless),
      (bytes, completed) => cut.push([bytes, completed]),
    ),
  ) as Readable;
  await new Promise<void>((resolve) => broken.once('data', () => resolve()));
  broken.destroy();
  await new Promise((resolve) => setImmediate(resolve));
  expect(cut).toHaveLength(1);
  expect(cut[0]?.[1]).toBe(false);
});
