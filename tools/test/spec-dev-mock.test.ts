// The spec-dev loop's mock (tools/spec-dev/mock.mjs) with real Prisms on a small bundle: a new example is
// answered as soon as the bundle is handed over, a new Prism takes over without the mock ever failing a
// request, and a bundle Prism cannot load is reported while the last one it loaded keeps answering.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMock } from '../spec-dev/mock.mjs';
import { freePort } from '../spec-mock.mjs';

// biome-ignore lint/suspicious/noExplicitAny: the fixture is a plain JSON document edited freely
type Doc = Record<string, any>;

function bundle(status: string, paths = true): { doc: Doc; text: string } {
  const doc: Doc = {
    openapi: '3.1.0',
    info: { title: 'Mock', version: '1' },
    paths: paths
      ? {
          '/health': {
            get: {
              operationId: 'getHealth',
              responses: {
                '200': {
                  description: 'Up.',
                  content: {
                    'application/json': {
                      schema: { type: 'object', properties: { status: { type: 'string' } } },
                      examples: { ok: { value: { status } } },
                    },
                  },
                },
              },
            },
          },
        }
      : {},
  };
  return { doc, text: JSON.stringify(doc, null, 2) };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const staging = mkdtempSync(join(tmpdir(), 'spec-dev-mock-'));
const lines: string[] = [];
let mock: Awaited<ReturnType<typeof startMock>>;
let url: string;

/** Resolves when the mock has logged a line matching `pattern` after line `from`. */
async function logged(pattern: RegExp, from: number, timeoutMs = 120_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const line = lines.slice(from).find((l) => pattern.test(l));
    if (line !== undefined) return line;
    if (Date.now() > deadline) throw new Error(`never logged ${pattern}:\n${lines.join('\n')}`);
    await sleep(20);
  }
}

const health = async () => {
  const response = await fetch(`${url}/health`);
  return { status: response.status, body: await response.text() };
};

beforeAll(async () => {
  const port = await freePort();
  url = `http://127.0.0.1:${port}`;
  mock = await startMock({ stagingDir: staging, host: '127.0.0.1', port, log: (line) => lines.push(line) });
  mock.update(bundle('one'));
  mock.reload();
  await mock.ready;
}, 150_000);

afterAll(async () => {
  await mock?.close();
  rmSync(staging, { recursive: true, force: true });
});

describe('the spec-dev mock', () => {
  it('answers from the first Prism once it listens', async () => {
    expect(lines.some((l) => /^mock ready: http/.test(l))).toBe(true);
    expect(await health()).toEqual({ status: 200, body: '{"status":"one"}' });
  });

  it('answers a new example at once, and never fails a request while a new Prism takes over', async () => {
    const from = lines.length;
    mock.update(bundle('two'));
    expect(await health()).toEqual({ status: 200, body: '{"status":"two"}' });
    mock.reload();
    const answers = new Set<string>();
    let reloaded = false;
    void logged(/^mock reloaded: http/, from).then(() => {
      reloaded = true;
    });
    while (!reloaded) {
      const { status, body } = await health();
      answers.add(`${status} ${body}`);
      await sleep(20);
    }
    for (let i = 0; i < 10; i++) answers.add(Object.values(await health()).join(' '));
    expect([...answers]).toEqual(['200 {"status":"two"}']);
    // The replaced Prism is stopped and its snapshot removed; only the new one's is left.
    await sleep(1_000);
    expect(readdirSync(staging).filter((name) => name.startsWith('mock-'))).toHaveLength(1);
  }, 150_000);

  it('reports a bundle Prism cannot load, and keeps answering from the last one it loaded', async () => {
    const from = lines.length;
    mock.update(bundle('three', false));
    mock.reload();
    expect(await logged(/^mock: Prism could not load the new bundle/, from)).toMatch(
      /No operations found in the current file.*keeps answering from the last bundle Prism loaded/,
    );
    expect(await health()).toEqual({ status: 200, body: '{"status":"two"}' });
    // The next good bundle loads as usual.
    const next = lines.length;
    mock.update(bundle('four'));
    mock.reload();
    await logged(/^mock reloaded: http/, next);
    expect(await health()).toEqual({ status: 200, body: '{"status":"four"}' });
  }, 150_000);
});
