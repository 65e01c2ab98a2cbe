// `svc listen --forward-to` against the real server app (in process, port 0, the simulated driver) and
// a receiver on 127.0.0.1 started here: a computer's events arrive signed as real deliveries and pass
// `@svc/client/webhooks`' verifyWebhook; a receiver answering 500 is reported and listening goes on;
// "forwarding …" is printed once the stream is open (a change made right after it is forwarded, even
// through an API slow to answer); bad arguments are usage errors; stopping ends it with 130.
import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { verifyWebhook } from '@svc/client/webhooks';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { CliIo } from '../../src/io.js';
import { run } from '../../src/program.js';
import { type RunningService, startApp } from '../support/server.js';

/** A request the receiver got. */
interface Received {
  /** The request's path: each listener of a test may forward to a path of its own. */
  path: string;
  headers: Record<string, string>;
  body: string;
  type: string;
}

describe('svc listen against the real server', () => {
  let service: RunningService;
  let env: Record<string, string>;
  let workspace: string;
  let receiver: Server;
  let receiverUrl: string;
  const received: Received[] = [];
  /** What the receiver answers. */
  let status = 204;

  /** `svc` in process, its output readable while it runs. */
  function svc(argv: string[], io: Partial<CliIo> = {}) {
    let stdout = '';
    let stderr = '';
    const done = run(argv, {
      env,
      isTTY: false,
      ...io,
      stdout: { write: (chunk: string | Uint8Array) => (stdout += Buffer.from(chunk).toString()) },
      stderr: { write: (chunk: string | Uint8Array) => (stderr += Buffer.from(chunk).toString()) },
    });
    return { done, stdout: () => stdout, stderr: () => stderr };
  }
  const json = async (argv: string[]) => {
    const call = svc(['-o', 'json', ...argv]);
    expect(await call.done, call.stderr()).toBe(0);
    return JSON.parse(call.stdout());
  };
  const createComputer = (name: string, wait: boolean) =>
    json([
      'computers',
      'create',
      workspace,
      '--name',
      name,
      '--size',
      'small',
      '--image',
      'ubuntu-2404',
      ...(wait ? ['--wait'] : []),
    ]);

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-listen-'));
    service = await startApp(dir, { SVC_WEBHOOKS_ALLOW_LOOPBACK: 'true' });
    env = { SVC_KEY_FILE: service.keyFilePath, SVC_CONFIG_DIR: join(dir, 'config') };
    workspace = (await json(['workspaces', 'list'])).workspaces[0].name;
    receiver = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const body = Buffer.concat(chunks).toString();
        received.push({
          path: request.url ?? '',
          headers: request.headers as Record<string, string>,
          body,
          type: JSON.parse(body).type,
        });
        response.writeHead(status).end(status === 500 ? 'receiver broke' : '');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
  });
  const stops: AbortController[] = [];
  afterAll(async () => {
    for (const stop of stops) stop.abort();
    receiver?.closeAllConnections();
    await new Promise((resolve) => receiver?.close(resolve));
    await service?.close();
  });

  test('forwards the chosen events signed as deliveries; a 500 is printed and listening goes on; stop is 130', async () => {
    const interrupt = new AbortController();
    stops.push(interrupt);
    const types = ['computer.created', 'computer.updated'];
    const listening = svc(['listen', workspace, '--forward-to', receiverUrl, '--events', types.join(',')], {
      signal: interrupt.signal,
    });
    await expect.poll(() => listening.stderr(), { timeout: 5_000 }).toContain('Ctrl-C to stop');
    const secret = /signing with (whsec_\S+)/.exec(listening.stderr())?.[1] as string;
    expect(secret).toMatch(/^whsec_/);
    expect(listening.stderr()).toContain('your receiver can verify with this secret');
    // Without a cursor the stream starts at the next change; the line above says it is open.

    const box = await createComputer('hooked', true);
    await expect
      .poll(() => received.some((r) => r.type === 'computer.created'), { timeout: 15_000 })
      .toBe(true);
    const first = received.find((r) => r.type === 'computer.created') as Received;
    const event = await verifyWebhook({ secrets: secret, headers: first.headers, body: first.body });
    expect(event.type).toBe('computer.created');
    if (event.type === 'computer.created') expect(event.computer.id).toBe(box.computer.id);
    expect(first.headers['webhook-id']).toBe(event.id);
    expect(first.headers['content-type']).toBe('application/json');
    // A wrong secret does not verify it: the signature is real.
    await expect(
      verifyWebhook({
        secrets: 'whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=',
        headers: first.headers,
        body: first.body,
      }),
    ).rejects.toMatchObject({ reason: 'bad_signature' });
    expect(listening.stdout()).toMatch(
      new RegExp(`^\\S+Z computer\\.created ${event.id} #\\d+ -> 204 \\(\\d+ ms\\)$`, 'm'),
    );

    // The receiver fails: its status is printed, and the next events are still forwarded.
    status = 500;
    const count = received.length;
    await createComputer('failing', false);
    await expect
      .poll(() => listening.stdout(), { timeout: 15_000 })
      .toMatch(/computer\.created \S+ #\d+ -> 500 /);
    status = 204;
    await expect
      .poll(() => received.slice(count).filter((r) => r.type === 'computer.updated').length, {
        timeout: 15_000,
      })
      .toBeGreaterThan(0);
    await expect
      .poll(() => listening.stdout(), { timeout: 5_000 })
      .toMatch(/computer\.updated \S+ #\d+ -> 204 /);
    // Only the types asked for (the computers' operations were events too).
    expect(new Set(received.map((r) => r.type))).toEqual(new Set(types));

    interrupt.abort();
    expect(await listening.done).toBe(130);
    expect(listening.stderr()).toContain('svc: stopped listening');
  });

  test('a given --secret signs; an unreachable receiver is printed, not fatal', async () => {
    const interrupt = new AbortController();
    stops.push(interrupt);
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const count = received.length;
    const listening = svc(['listen', workspace, '--forward-to', receiverUrl, '--secret', secret], {
      signal: interrupt.signal,
    });
    // A second listener whose receiver is gone (a port nobody listens on: the receiver's, closed below).
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const deadUrl = `http://127.0.0.1:${(closed.address() as AddressInfo).port}/`;
    await new Promise((resolve) => closed.close(resolve));
    const orphan = svc(['listen', workspace, '--forward-to', deadUrl], { signal: interrupt.signal });
    await expect.poll(() => listening.stderr(), { timeout: 5_000 }).toContain('Ctrl-C to stop');
    await expect.poll(() => orphan.stderr(), { timeout: 5_000 }).toContain('Ctrl-C to stop');
    expect(listening.stderr()).not.toContain('signing with');

    await createComputer('keyed', false);
    await expect.poll(() => received.length, { timeout: 15_000 }).toBeGreaterThan(count);
    const next = received[count] as Received;
    expect((await verifyWebhook({ secrets: [secret], headers: next.headers, body: next.body })).type).toBe(
      next.type,
    );
    await expect.poll(() => orphan.stdout(), { timeout: 15_000 }).toMatch(/ #\d+ -> error: ECONNREFUSED /);
    interrupt.abort();
    expect(await listening.done).toBe(130);
    expect(await orphan.done).toBe(130);
  });

  test('says it is forwarding only once the stream is open: a computer created right after that line is forwarded, however slow the API', async () => {
    const interrupt = new AbortController();
    stops.push(interrupt);
    // The events request reaches the server a second late (a slow proxy, a far region); nothing else does.
    const slowEvents = async (request: Request) => {
      if (new URL(request.url).pathname.endsWith('/events'))
        await new Promise((resolve) => setTimeout(resolve, 1_000));
      return fetch(request);
    };
    const listening = svc(
      ['listen', workspace, '--forward-to', `${receiverUrl}/slow`, '--events', 'computer.created'],
      { signal: interrupt.signal, fetch: slowEvents },
    );
    // What a script does: wait for the line, then make the change it wants forwarded.
    await expect.poll(() => listening.stderr(), { timeout: 10_000 }).toContain('Ctrl-C to stop');
    const box = await createComputer('announced', false);
    const forwarded = () =>
      received.filter((r) => r.path === '/hooks/slow').map((r) => JSON.parse(r.body).computer.id);
    await expect.poll(forwarded, { timeout: 10_000 }).toContain(box.computer.id);
    interrupt.abort();
    expect(await listening.done).toBe(130);
  });

  test('svc webhooks test-endpoint: the service sends a sample event that verifyWebhook accepts with the endpoint secret', async () => {
    const count = received.length;
    const created = await json([
      'webhooks',
      'create-endpoint',
      workspace,
      '--url',
      receiverUrl,
      '--idempotency-key',
      'listen-test-endpoint',
      '--',
      'computer.deleted',
    ]);
    const { id, secret } = created.webhook_endpoint;
    expect(secret).toMatch(/^whsec_/);
    await json(['webhooks', 'test-endpoint', workspace, id, '--event-type', 'computer.created']);
    await expect.poll(() => received.length, { timeout: 15_000 }).toBeGreaterThan(count);
    const sample = received[count] as Received;
    expect(sample.headers['svc-webhook-test']).toBe('true');
    const event = await verifyWebhook({ secrets: secret, headers: sample.headers, body: sample.body });
    expect(event.type).toBe('computer.created');
    await expect(
      verifyWebhook({
        secrets: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
        headers: sample.headers,
        body: sample.body,
      }),
    ).rejects.toMatchObject({ reason: 'bad_signature' });
  });

  test('--after replays the events after that id first, then goes on with new ones', async () => {
    // Earlier tests made computers: their events are in the log. Replay from the start of it.
    const interrupt = new AbortController();
    stops.push(interrupt);
    // Each listener forwards to a path of its own: a forward the first one still had in flight when
    // it was stopped must not count as the second one's.
    const replayed = () => received.filter((r) => r.path === '/hooks/replay');
    const replay = svc(['listen', workspace, '--forward-to', `${receiverUrl}/replay`, '--after', '0'], {
      signal: interrupt.signal,
    });
    await expect.poll(() => replayed().length, { timeout: 15_000 }).toBeGreaterThan(3);
    const places = () =>
      [...replay.stdout().matchAll(/^\S+Z \S+ \S+ #(\d+) -> /gm)].map((match) => Number(match[1]));
    // In the log's order, from its start: the workspace's first events, each line with its place.
    await expect.poll(() => places().length, { timeout: 15_000 }).toBeGreaterThan(3);
    const sequences = replayed().map((r) => JSON.parse(r.body).sequence as number);
    expect(places().slice(0, 3)).toEqual([1, 2, 3]);
    expect(sequences.slice(0, 3)).toEqual([1, 2, 3]);
    interrupt.abort();
    expect(await replay.done).toBe(130);
    // From the middle: only what came after that event.
    const middle = sequences[2] as number;
    const later = new AbortController();
    stops.push(later);
    const resumedAt = () => received.filter((r) => r.path === '/hooks/resumed');
    const resumed = svc(
      ['listen', workspace, '--forward-to', `${receiverUrl}/resumed`, '--after', String(middle)],
      { signal: later.signal },
    );
    await expect.poll(() => resumedAt().length, { timeout: 15_000 }).toBeGreaterThan(0);
    expect(JSON.parse((resumedAt()[0] as Received).body).sequence).toBe(middle + 1);
    later.abort();
    expect(await resumed.done).toBe(130);
    expect(resumed.stdout()).toMatch(new RegExp(`^\\S+Z \\S+ \\S+ #${middle + 1} -> 204 `, 'm'));
  });

  test('--forward-to must be an http(s) URL, --events known types, --secret a whsec_ secret', async () => {
    for (const argv of [
      ['--forward-to', receiverUrl, '--after', 'yesterday'],
      ['--forward-to', 'ftp://127.0.0.1/x'],
      ['--forward-to', 'not a url'],
      ['--forward-to', receiverUrl, '--events', 'computer.exploded'],
      ['--forward-to', receiverUrl, '--secret', 'hunter2'],
      [],
    ]) {
      const call = svc(['listen', workspace, ...argv]);
      expect(await call.done, argv.join(' ')).toBe(2);
    }
    const help = svc(['listen', '--help']);
    await help.done;
    expect(help.stdout()).toContain('THIS MACHINE');
  });
});
