// The delivery checks of the contract suite (support/webhooks.ts) catch each way a delivery can break
// the spec's `webhooks` section: each case breaks one good delivery, built from the event stream's own
// example event and signed with `standardwebhooks`, which passes as it is.
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { document } from './support/spec-index.js';
import { type Delivery, deliveryViolations, startReceiver } from './support/webhooks.js';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw6MhyPzW7cCY=';
const example = (
  document.paths['/workspaces/{workspace}/events']!.get as {
    responses: Record<
      string,
      { content: Record<string, { examples: Record<string, { value: { data: string }[] }> }> }
    >;
  }
).responses['200']!.content['text/event-stream']!.examples;
const event = JSON.parse(Object.values(example)[0]!.value[0]!.data) as Record<string, unknown>;

/** A delivery of `body` as the server sends one: signed now with `secret`. */
function delivery(body: Record<string, unknown> = event, secret = SECRET, at = new Date()): Delivery {
  const text = JSON.stringify(body);
  const id = String(body.id);
  return {
    path: '/hook',
    body: text,
    headers: {
      'content-type': 'application/json',
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': new Webhook(secret).sign(id, at, text),
    },
  };
}

describe('deliveryViolations', () => {
  it('passes a delivery of the stream example event, signed with the secret', () => {
    expect(event.type).toBe('computer.created');
    expect(deliveryViolations(delivery(), SECRET)).toEqual([]);
  });

  it.each<[string, () => Delivery, RegExp]>([
    ['a body its schema refuses', () => delivery({ ...event, computer: undefined }), /body: .*computer/],
    ['an event type with no webhook', () => delivery({ ...event, type: 'computer.exploded' }), /no webhook/],
    ['a body that is not JSON', () => ({ ...delivery(), body: '{' }), /not JSON/],
    [
      'a missing webhook-id',
      () => {
        const d = delivery();
        delete d.headers['webhook-id'];
        return d;
      },
      /header webhook-id is missing/,
    ],
    [
      'a svc-webhook-test header other than `true`',
      () => {
        const d = delivery();
        d.headers['svc-webhook-test'] = 'false';
        return d;
      },
      /header svc-webhook-test/,
    ],
    [
      'a signature with another secret',
      () => delivery(event, 'whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA='),
      /signature/,
    ],
    [
      'a timestamp 10 minutes old',
      () => delivery(event, SECRET, new Date(Date.now() - 600_000)),
      /signature/,
    ],
    [
      'another content type',
      () => ({ ...delivery(), headers: { ...delivery().headers, 'content-type': 'text/plain' } }),
      /content-type/,
    ],
  ])('catches %s', (_name, make, message) => {
    expect(deliveryViolations(make(), SECRET).join('\n')).toMatch(message);
  });
});

describe('the receiver', () => {
  it('keeps what it gets up to its limit, and gives up waiting after its timeout', async () => {
    const receiver = await startReceiver({ limit: 1, timeoutMs: 300 });
    try {
      const post = () => fetch(receiver.url, { method: 'POST', body: '{}' }).then((r) => r.status);
      expect(await post()).toBe(204);
      expect(await post()).toBe(503);
      expect((await receiver.waitFor(1)).map((d) => d.body)).toEqual(['{}']);
      await expect(receiver.waitFor(2)).rejects.toThrow(/1 of 2 deliveries in 300 ms/);
    } finally {
      await receiver.close();
    }
  });
});
