import { Webhook } from 'standardwebhooks';
import { describe, expect, test, vi } from 'vitest';
import { newWebhookSecret, SecretBox } from '../../src/platform/secrets.js';
import { signedHeaders } from '../../src/webhooks/signing.js';

describe('webhooks: signing', () => {
  test('the Standard Webhooks published test vector', () => {
    // From the Standard Webhooks specification's reference libraries' tests.
    const headers = signedHeaders({
      id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
      at: new Date(1614265330 * 1000),
      body: '{"test": 2432232314}',
      secrets: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'],
    });
    expect(headers).toEqual({
      'webhook-id': 'msg_p5jXN8AQM9LWM0D4loKWxJek',
      'webhook-timestamp': '1614265330',
      'webhook-signature': 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
    });
    vi.useFakeTimers({ now: 1614265330 * 1000 + 10_000, toFake: ['Date'] });
    try {
      expect(
        new Webhook('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw').verify('{"test": 2432232314}', headers),
      ).toEqual({
        test: 2432232314,
      });
    } finally {
      vi.useRealTimers();
    }
  });

  test("verifies with the package's own verifier, with either secret during an overlap", () => {
    const current = newWebhookSecret();
    const previous = newWebhookSecret();
    expect(current).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const body = JSON.stringify({ id: 'evt', type: 'computer.created' });
    const headers = signedHeaders({ id: 'evt', at: new Date(), body, secrets: [current, previous] });
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(new Webhook(current).verify(body, headers)).toEqual(JSON.parse(body));
    expect(new Webhook(previous).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(newWebhookSecret()).verify(body, headers)).toThrow();
    expect(() => new Webhook(current).verify(`${body} `, headers)).toThrow();
  });

  test('secrets are sealed per endpoint and do not open elsewhere', () => {
    const box = new SecretBox(new Uint8Array(32).fill(7));
    const secret = newWebhookSecret();
    const sealed = box.seal('endpoint-a', secret);
    expect(sealed.toString('latin1')).not.toContain(secret.slice(6, 20));
    expect(box.open('endpoint-a', sealed)).toBe(secret);
    expect(() => box.open('endpoint-b', sealed)).toThrow();
    expect(() => new SecretBox(new Uint8Array(32).fill(8)).open('endpoint-a', sealed)).toThrow();
  });
});
